package dev.openshell.supervisor.engine.chain;

import java.net.InetAddress;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The WebSocket message-session slots of one supervisor ({@link MessageChain}), shared fairly between clients the way
 * connections are ({@code [openshell.supervisor.limits]} {@code max_connections_per_client} and
 * {@code max_connections_per_process}, {@code docs/policy-reference.md}):
 * <ul>
 *   <li>at most {@code total} sessions at once ({@code session_capacity} beyond it);</li>
 *   <li>one client address holds at most {@code perClient} of them (its share);</li>
 *   <li>a session that would take its address over its share is tied to its process: a process that holds fewer
 *       than {@code perProcess} sessions of the address in all may take one beyond the share
 *       ({@code process_session_limit} once it holds {@code perProcess}), and the address holds at most
 *       {@code 2 * perProcess} sessions beyond its share whatever the number of its processes
 *       ({@code client_session_limit} beyond that); when the process is not known (identity
 *       {@code endpoint-only}, another host, not Linux) the share is a hard cap ({@code client_session_limit}).</li>
 * </ul>
 * So one client that opens sessions as fast as it can, from any number of processes, leaves the other addresses at
 * least {@code total - perClient - 2 * perProcess} slots (8 of the default 32), and a process of its own address that
 * holds fewer than {@code perProcess} sessions (the agent next to a runaway tool that holds the share) up to
 * {@code perProcess} of the {@code 2 * perProcess} beyond it.
 *
 * <p>Thread-safe (one monitor; every call is a few map operations).
 */
public final class SessionSlots {
    /** The default share of one client address: half of {@link MessageChain#MAX_CONCURRENT_SESSIONS}. */
    public static final int DEFAULT_PER_CLIENT = MessageChain.MAX_CONCURRENT_SESSIONS / 2;
    /**
     * The default number of sessions below which a process may take one beyond its address's share (twice it: the
     * sessions an address may hold beyond its share).
     */
    public static final int DEFAULT_PER_PROCESS = 4;

    /**
     * Who opens a session.
     *
     * @param address the client's IP address, empty when not known (all such sessions share one share)
     * @param pid the process holding the client's socket, empty when not known
     */
    public record Owner(Optional<InetAddress> address, OptionalLong pid) {
        /** An owner nothing is known of. */
        public static final Owner UNKNOWN = new Owner(Optional.empty(), OptionalLong.empty());

        /** @throws NullPointerException if a part is {@code null} */
        public Owner {
            Objects.requireNonNull(address, "address");
            Objects.requireNonNull(pid, "pid");
        }
    }

    /** One taken slot; {@link #release} gives it back once (later calls do nothing). */
    public final class Slot {
        private final InetAddress address;
        private final Long pid;
        private final boolean beyondShare;
        private boolean released;

        private Slot(InetAddress address, Long pid, boolean beyondShare) {
            this.address = address;
            this.pid = pid;
            this.beyondShare = beyondShare;
        }

        /** Gives the slot back. */
        public void release() {
            synchronized (SessionSlots.this) {
                if (released) {
                    return;
                }
                released = true;
                used--;
                if (pid != null) {
                    decrement(byProcess, new ProcessKey(key(address), pid));
                }
                decrement(beyondShare ? beyondByAddress : byAddress, key(address));
            }
        }
    }

    /** The result of {@link #take}: a slot, or the platform code of the refusal. */
    public sealed interface Taken {
    }

    /** @param slot the slot, released when the session ends */
    public record Granted(Slot slot) implements Taken {
    }

    /**
     * @param code {@code session_capacity}, {@code client_session_limit} or {@code process_session_limit}
     */
    public record Denied(String code) implements Taken {
    }

    private record ProcessKey(Object address, long pid) {
    }

    /** The key of an unknown address in {@link #byAddress}. */
    private static final Object UNKNOWN_ADDRESS = new Object();

    private final int total;
    private final int perClient;
    private final int perProcess;
    /** Sessions of an address within its share. */
    private final Map<Object, Integer> byAddress = new HashMap<>();
    /** Sessions of an address beyond its share. */
    private final Map<Object, Integer> beyondByAddress = new HashMap<>();
    /** Sessions of an identified process, within and beyond its address's share. */
    private final Map<ProcessKey, Integer> byProcess = new HashMap<>();
    private int used;

    /**
     * @param total sessions at once, at least 1
     * @param perClient sessions of one address within its share, 1 to {@code total}
     * @param perProcess sessions below which an identified process may take one beyond its address's share (and
     *     half of what the address may hold beyond it), 0 to {@code total / 2}
     * @throws IllegalArgumentException when a number is out of range
     */
    public SessionSlots(int total, int perClient, int perProcess) {
        if (total < 1 || perClient < 1 || perClient > total || perProcess < 0 || 2 * perProcess > total) {
            throw new IllegalArgumentException("session slots " + total + " total, " + perClient + " per client, "
                    + perProcess + " per process are out of range");
        }
        this.total = total;
        this.perClient = perClient;
        this.perProcess = perProcess;
    }

    private static Object key(InetAddress address) {
        return address == null ? UNKNOWN_ADDRESS : address;
    }

    private static <K> void decrement(Map<K, Integer> counts, K key) {
        counts.computeIfPresent(key, (k, n) -> n == 1 ? null : n - 1);
    }

    /**
     * Takes a slot for {@code owner}.
     *
     * @return the slot, or why none was given
     */
    public synchronized Taken take(Owner owner) {
        if (used >= total) {
            return new Denied("session_capacity");
        }
        InetAddress address = owner.address().orElse(null);
        Long pid = owner.pid().isPresent() ? owner.pid().getAsLong() : null;
        ProcessKey process = pid == null ? null : new ProcessKey(key(address), pid);
        boolean beyond = byAddress.getOrDefault(key(address), 0) >= perClient;
        if (beyond) {
            if (process == null || perProcess == 0) {
                return new Denied("client_session_limit");
            }
            if (byProcess.getOrDefault(process, 0) >= perProcess) {
                return new Denied("process_session_limit");
            }
            if (beyondByAddress.getOrDefault(key(address), 0) >= 2 * perProcess) {
                return new Denied("client_session_limit");
            }
        }
        (beyond ? beyondByAddress : byAddress).merge(key(address), 1, Integer::sum);
        if (process != null) {
            byProcess.merge(process, 1, Integer::sum);
        }
        used++;
        return new Granted(new Slot(address, pid, beyond));
    }

    /** {@return the slots taken now} */
    public synchronized int used() {
        return used;
    }
}
