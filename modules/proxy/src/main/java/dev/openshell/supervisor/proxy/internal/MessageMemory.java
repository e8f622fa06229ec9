package dev.openshell.supervisor.proxy.internal;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The heap one WebSocket session holds for its messages, reserved from the proxy's {@link BodyBudget} (the same
 * process-wide bound, client share and wait as request bodies: both are bytes held on the heap for inspection, and
 * two separate bounds would let uploads and messages together take twice what the operator allowed).
 *
 * <p>Each relayed direction ({@link MessageRelay}) takes one {@link Held} and reserves, before it reads a frame's
 * payload, the bytes it is about to hold: the frames of the message being assembled, the assembled copy of a complete
 * message while the policy decides on it, and the messages a holding policy keeps
 * ({@link MessageRelay.Policy#heldBytes}, the scrub of server messages). What is delivered, refused or dropped is
 * given back as soon as the relay holds it no longer, and everything when the direction ends, on every path
 * ({@link Held#close()} in a {@code finally}).
 *
 * <p>When the budget (or the client's share of it) stays full past {@code body_buffer_wait}, the reservation is
 * refused: the refusal is reported once per session ({@code body_buffer_busy} or {@code client_body_buffer_limit},
 * the body budget's codes, so the same metric counts it) and the relay closes both peers with status 1013 (RFC 6455,
 * section 7.4.1, "Try Again Later": a transient lack of room, not a fault of the message). The session's other
 * closes are recorded in the same home ({@link #closes()}, {@link WebSocketCloses}).
 */
final class MessageMemory {
    private final BodyBudget budget;
    private final InetAddress client;
    private final Supplier<OptionalLong> owner;
    private final WebSocketCloses closes;
    /** Whether the session's refusal was reported (once per session). */
    private final AtomicBoolean reported = new AtomicBoolean();

    /**
     * @param budget the process-wide budget, or {@code null} for no bound (tests of framing only)
     * @param client the client address the reservations count against, or {@code null} when unknown
     * @param owner the PID of the process behind the client connection (asked only past the client's share)
     * @param closes where the session's refusals are recorded: a refused reservation once per session
     *     ({@link WebSocketCloses#busy}), and how each direction ended ({@link WebSocketCloses#ended})
     */
    MessageMemory(BodyBudget budget, InetAddress client, Supplier<OptionalLong> owner, WebSocketCloses closes) {
        this.budget = budget;
        this.client = client;
        this.owner = owner;
        this.closes = closes;
    }

    /** {@return a memory that reserves nothing and records nothing} For relays of tests that read framing only. */
    static MessageMemory unbounded() {
        return new MessageMemory(null, null, OptionalLong::empty, WebSocketCloses.none());
    }

    /** {@return where the session's refusals are recorded} */
    WebSocketCloses closes() {
        return closes;
    }

    /** {@return the accounting of one direction} Used by that direction's thread only. */
    Held direction() {
        return new Held();
    }

    /** The bytes one direction holds now; {@link #close} gives back everything. Not thread-safe: one thread. */
    final class Held implements AutoCloseable {
        private final List<BodyBudget.Reservation> parts = new ArrayList<>();
        /** The size of each part, in bytes (what was asked; the budget caps one part at its whole size). */
        private final List<Long> sizes = new ArrayList<>();
        private long held;

        private Held() {
        }

        /** {@return where the session's refusals are recorded} */
        WebSocketCloses closes() {
            return closes;
        }

        /** {@return the bytes reserved now} */
        long reserved() {
            return held;
        }

        /**
         * Makes sure at least {@code total} bytes are reserved, waiting at most the budget's wait for the rest.
         *
         * @param total the bytes the direction is about to hold in all
         * @return whether they are reserved; {@code false} when refused (reported once per session)
         * @throws java.io.InterruptedIOException when interrupted while waiting
         */
        boolean hold(long total) throws java.io.InterruptedIOException {
            if (budget == null || total <= held) {
                return true;
            }
            BodyBudget.Claim claim;
            try {
                claim = budget.reserve(total - held, client, owner);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException("interrupted while waiting for message buffer room");
            }
            if (claim.reservation() == null) {
                if (reported.compareAndSet(false, true)) {
                    closes.busy(claim.refusal());
                }
                return false;
            }
            parts.add(claim.reservation());
            sizes.add(total - held);
            held = total;
            return true;
        }

        /**
         * Gives back what is reserved above {@code total}: the direction holds only that much now.
         *
         * @param total the bytes the direction still holds
         */
        void settle(long total) {
            long keep = Math.max(0, total);
            while (held > keep && !parts.isEmpty()) {
                int last = parts.size() - 1;
                long size = sizes.get(last);
                long drop = held - keep;
                if (drop >= size) {
                    parts.remove(last).close();
                    sizes.remove(last);
                    held -= size;
                } else {
                    parts.get(last).shrinkTo(size - drop);
                    sizes.set(last, size - drop);
                    held = keep;
                }
            }
        }

        /** Gives back everything: the direction ended. */
        @Override
        public void close() {
            for (BodyBudget.Reservation r : parts) {
                r.close();
            }
            parts.clear();
            sizes.clear();
            held = 0;
        }
    }
}
