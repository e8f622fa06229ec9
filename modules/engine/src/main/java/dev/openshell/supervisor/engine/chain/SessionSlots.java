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
 *   <li>a session that would take its address over its share is tied to its process: each process may hold
 *       {@code perProcess} sessions beyond the share ({@code process_session_limit} beyond that); when the process
 *       is not known (identity {@code endpoint-only}, another host, not Linux) the share is a hard cap
 *       ({@code client_session_limit}).</li>
 * </ul>
 * So one client (or one process of it) that opens sessions as fast as it can leaves the other addresses at least
 * {@code total - perClient - perProcess} slots, and another process of its own address {@code perProcess}.
 *
 * <p>Thread-safe (one monitor; every call is a few map operations).
 */
public final class SessionSlots {
    /** The default share of one client address: half of {@link MessageChain#MAX_CONCURRENT_SESSIONS}. */
    public static final int DEFAULT_PER_CLIENT = MessageChain.MAX_CONCURRENT_SESSIONS / 2;
    /** The default number of sessions one process may hold beyond its address's share. */
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
        private final Long beyondSharePid;
        private boolean released;

        private Slot(InetAddress address, Long beyondSharePid) {
            this.address = address;
            this.beyondSharePid = beyondSharePid;
        }

        /** Gives the slot back. */
        public void release() {
            synchronized (SessionSlots.this) {
                if (released) {
                    return;
                }
                released = true;
                used--;
                if (beyondSharePid != null) {
                    beyondShare.computeIfPresent(new ProcessKey(key(address), beyondSharePid), (k, n) -> n == 1 ? null
                            : n - 1);
                } else {
                    byAddress.computeIfPresent(key(address), (k, n) -> n == 1 ? null : n - 1);
                }
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
    private final Map<Object, Integer> byAddress = new HashMap<>();
    private final Map<ProcessKey, Integer> beyondShare = new HashMap<>();
    private int used;

    /**
     * @param total sessions at once, at least 1
     * @param perClient sessions of one address within its share, 1 to {@code total}
     * @param perProcess sessions one process may hold beyond its address's share, 0 to {@code total}
     * @throws IllegalArgumentException when a number is out of range
     */
    public SessionSlots(int total, int perClient, int perProcess) {
        if (total < 1 || perClient < 1 || perClient > total || perProcess < 0 || perProcess > total) {
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
        int held = byAddress.getOrDefault(key(address), 0);
        if (held < perClient) {
            byAddress.put(key(address), held + 1);
            used++;
            return new Granted(new Slot(address, null));
        }
        if (owner.pid().isEmpty() || perProcess == 0) {
            return new Denied("client_session_limit");
        }
        ProcessKey k = new ProcessKey(key(address), owner.pid().getAsLong());
        int beyond = beyondShare.getOrDefault(k, 0);
        if (beyond >= perProcess) {
            return new Denied("process_session_limit");
        }
        beyondShare.put(k, beyond + 1);
        used++;
        return new Granted(new Slot(address, owner.pid().getAsLong()));
    }

    /** {@return the slots taken now} */
    public synchronized int used() {
        return used;
    }
}
