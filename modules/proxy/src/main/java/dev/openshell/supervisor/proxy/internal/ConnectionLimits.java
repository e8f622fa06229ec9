package dev.openshell.supervisor.proxy.internal;

import java.net.InetAddress;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Caps on open client connections of the proxy listener: in total, per client address, and, beyond an address's cap,
 * per process of that address. Each open connection holds a read buffer and may hold a request head of up to 64 KiB
 * while it is read, so the caps bound the memory that unfinished heads can take (about {@code maxTotal} times 80 KiB).
 *
 * <p>Fairness within one address: connections up to the address's cap ({@code maxPerClient}) are not tied to their
 * process (that costs a {@code /proc} search). A connection that would take its address over the cap is tied to its
 * process (the owner lookup, {@code process identity}); each process may hold at most {@code maxPerProcess} such
 * connections. So a runaway tool that holds its address's whole share still leaves every other process of that
 * address (the agent) its own connections, and is itself held to the share plus {@code maxPerProcess}. A connection
 * whose process is not found (identity off, another host), or that arrives while {@code maxPerProcess} lookups of its
 * address are still waiting, is refused as before. A connection over a cap is closed
 * before a byte of it is read and counted by its refusal reason ({@code connection_limit},
 * {@code client_connection_limit}, {@code process_connection_limit}). Thread-safe.
 */
public final class ConnectionLimits {
    /** The default of connections one process may hold beyond its address's cap. */
    public static final int DEFAULT_MAX_PER_PROCESS = 64;

    private final int maxTotal;
    private final int maxPerClient;
    private final int maxPerProcess;
    private final AtomicInteger open = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, Integer> perClient = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Owner, Integer> perProcess = new ConcurrentHashMap<>();
    /** Owner lookups waiting, by address; at most {@code maxPerProcess} each. */
    private final ConcurrentHashMap<InetAddress, Integer> lookups = new ConcurrentHashMap<>();

    /** One process of one client address. @param client the address @param pid the process */
    private record Owner(InetAddress client, long pid) {
    }

    /**
     * What {@link #acquire} decided.
     *
     * @param slot the admitted connection's slot (give it back with {@link #release}), or {@code null} when refused
     * @param refusal the refusal reason, or {@code null} when admitted
     */
    record Claim(Slot slot, String refusal) {
    }

    /** An admitted connection's place: its address, and its process when it is over the address's cap. */
    static final class Slot {
        private final InetAddress client;
        private final Owner owner;

        private Slot(InetAddress client, Owner owner) {
            this.client = client;
            this.owner = owner;
        }
    }

    /**
     * Caps without per-process connections beyond an address's cap.
     *
     * @param maxTotal the most client connections open at once; at least 1
     * @param maxPerClient the most open at once from one client address; 1..{@code maxTotal}
     * @throws IllegalArgumentException when a cap is out of range
     */
    public ConnectionLimits(int maxTotal, int maxPerClient) {
        this(maxTotal, maxPerClient, 0);
    }

    /**
     * @param maxTotal the most client connections open at once; at least 1
     * @param maxPerClient the most open at once from one client address, not tied to a process; 1..{@code maxTotal}
     * @param maxPerProcess the most one process may open beyond its address's {@code maxPerClient}; 0 for none
     * @throws IllegalArgumentException when a cap is out of range
     */
    public ConnectionLimits(int maxTotal, int maxPerClient, int maxPerProcess) {
        if (maxTotal < 1 || maxPerClient < 1 || maxPerClient > maxTotal || maxPerProcess < 0) {
            throw new IllegalArgumentException("connection limits " + maxTotal + " total, " + maxPerClient
                    + " per client, " + maxPerProcess + " per process are out of range (1 <= per client <= total,"
                    + " 0 <= per process)");
        }
        this.maxTotal = maxTotal;
        this.maxPerClient = maxPerClient;
        this.maxPerProcess = maxPerProcess;
    }

    /** {@return the connections open now} */
    public int open() {
        return open.get();
    }

    /**
     * Claims a slot for a new connection.
     *
     * @param client the client address; {@code null} when unknown (counted in the total only)
     * @param owner finds the process holding the connection's client end (blocking, called only when the address is
     *     at its cap and {@code maxPerProcess} is not 0); empty when not found
     * @return the claim; never {@code null}
     */
    Claim acquire(InetAddress client, Supplier<OptionalLong> owner) {
        if (open.incrementAndGet() > maxTotal) {
            open.decrementAndGet();
            return new Claim(null, "connection_limit");
        }
        if (client == null) {
            return new Claim(new Slot(null, null), null);
        }
        boolean[] over = new boolean[1];
        perClient.compute(client, (k, n) -> {
            int c = n == null ? 0 : n;
            if (c >= maxPerClient) {
                over[0] = true;
                return n;
            }
            return c + 1;
        });
        if (!over[0]) {
            return new Claim(new Slot(client, null), null);
        }
        OptionalLong pid = maxPerProcess == 0 ? OptionalLong.empty() : lookUp(client, owner);
        if (pid.isEmpty()) {
            open.decrementAndGet();
            return new Claim(null, "client_connection_limit");
        }
        Owner o = new Owner(client, pid.getAsLong());
        perProcess.compute(o, (k, n) -> {
            int c = n == null ? 0 : n;
            over[0] = c >= maxPerProcess;
            return over[0] ? n : Integer.valueOf(c + 1);
        });
        if (over[0]) {
            open.decrementAndGet();
            return new Claim(null, "process_connection_limit");
        }
        return new Claim(new Slot(client, o), null);
    }

    /**
     * {@return the owner of an over-share connection} Empty, without a lookup, when {@code maxPerProcess} lookups of
     * the same address are already waiting: a connect flood then costs neither a {@code /proc} read per attempt nor
     * more than that many slots of the total cap (which other addresses need) while its lookups wait.
     */
    private OptionalLong lookUp(InetAddress client, Supplier<OptionalLong> owner) {
        boolean[] full = new boolean[1];
        lookups.compute(client, (k, n) -> {
            int c = n == null ? 0 : n;
            full[0] = c >= maxPerProcess;
            return full[0] ? n : Integer.valueOf(c + 1);
        });
        if (full[0]) {
            return OptionalLong.empty();
        }
        try {
            OptionalLong pid = owner.get();
            return pid == null ? OptionalLong.empty() : pid;
        } finally {
            lookups.computeIfPresent(client, (k, n) -> n <= 1 ? null : n - 1);
        }
    }

    /** Gives back the slot of a connection {@link #acquire} admitted. @param slot the slot */
    void release(Slot slot) {
        open.decrementAndGet();
        if (slot.owner != null) {
            perProcess.computeIfPresent(slot.owner, (k, n) -> n <= 1 ? null : n - 1);
        } else if (slot.client != null) {
            perClient.computeIfPresent(slot.client, (k, n) -> n <= 1 ? null : n - 1);
        }
    }
}
