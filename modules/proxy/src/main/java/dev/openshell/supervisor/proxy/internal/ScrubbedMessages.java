package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The server-to-client messages of a WebSocket upgrade whose request carried a credential, or went to a host a
 * credential is bound to (the rule of {@link ResponseScrub}: the upgrade's {@code 101} had a scrubber): each complete
 * message, text or binary (fragments reassembled by {@link MessageRelay}), and each control frame's payload is
 * scrubbed with the forms a response body is scrubbed with ({@link SecretScrubber}) before it reaches the client or,
 * on a session with a message chain, the chain. A changed message is re-framed as one unmasked frame (RFC 6455,
 * section 5.1); an unchanged one keeps its original frames.
 *
 * <p>Each message in which values were replaced is reported as a response scrub ({@link ResponseScrub#scrubbed}: no
 * header matches, the message's matches as body matches). A message longer than
 * {@link WebSocketFrames#MAX_TEXT_BYTES} is never relayed: {@link MessageRelay} closes with 1009 and
 * {@link #ended} records the response as uninspectable ({@code response_uninspectable}, not relayed).
 *
 * <p>A value split across data messages (a client joining streamed text, as realtime APIs stream deltas, rebuilds
 * it) is scrubbed as across server-sent events ({@link HeldText}, the text of each message read as
 * {@link EventText#message}: the string values of a JSON message joined per field path, of a message that starts
 * like JSON read leniently ({@link LenientJson}), else the whole message). The
 * messages are held on a schedule that does not depend on any secret's value (attacker pass finding 12): the last
 * characters of each joined text, a form's length minus one, are always held; a message goes, with every earlier one,
 * once enough text of its fields follows it, or {@value #AFTER_MESSAGES} messages or {@value #AFTER_BYTES} bytes
 * follow it; every held message goes at the server's close frame, at the end of its stream, and when the upstream has
 * been silent for {@link ResponseScrub#SILENCE_MILLIS} ms ({@link #silence}: a request-response protocol whose
 * server waits for the client's answer gets it after that pause). Released messages have the parts of a value in
 * earlier messages removed and the placeholder where it completes, each changed message re-framed. Control frames
 * are not held. Bounded: at most {@value #MAX_HELD_BYTES} bytes and {@value #MAX_HELD_MESSAGES} messages are held:
 * past a bound the session is closed (1009 past the bytes, 1008 past the messages or at the upstream's idle limit
 * while messages are held) and the response recorded as uninspectable ({@code response_uninspectable}, not relayed);
 * the held messages are never delivered.
 *
 * <p>Limits: a control frame's payload that grows over 125 bytes when scrubbed is cut to 125 bytes (a close frame
 * keeps only its status); control frames are scrubbed each alone.
 * Not thread-safe: one direction, one thread.
 */
final class ScrubbedMessages implements MessageRelay.Policy {
    /** The largest control frame payload (RFC 6455, section 5.5). */
    private static final int MAX_CONTROL = 125;
    /** The most bytes of messages held. */
    static final int MAX_HELD_BYTES = WebSocketFrames.MAX_TEXT_BYTES;
    /** The most messages held. */
    static final int MAX_HELD_MESSAGES = 4096;
    /** The oldest held message goes once this many messages follow it. */
    static final int AFTER_MESSAGES = 256;
    /** The oldest held message goes once this many bytes of messages follow it. */
    static final int AFTER_BYTES = MAX_HELD_BYTES / 2;

    /** One held message: its opcode, its bytes after the whole-message scrub, its frames, whether that changed it. */
    private record Held(int opcode, byte[] payload, List<byte[]> frames, boolean changed) {
    }

    private final ResponseScrub scrub;
    private final SecretScrubber scrubber;
    private final MessageRelay.Policy next;
    /** The held messages' joined text. */
    final HeldText joined;
    /** The held messages, oldest first, as {@link #joined} holds them. */
    private final ArrayDeque<Held> pending = new ArrayDeque<>();
    /** The heap the held messages take: their frames, their bytes and their joined text ({@link #heldBytes}). */
    private long heldHeap;
    /** Whether the relay ended at a bound while messages were held. */
    private boolean heldTooLong;
    /** Values the whole-message scrub replaced and reported since the last {@link #forward}. */
    private long reported;

    /**
     * @param scrub what the upgrade's response is scrubbed of, and where its records go
     * @param next the direction's message chain after the scrub, or {@code null} when none reads it
     */
    ScrubbedMessages(ResponseScrub scrub, MessageRelay.Policy next) {
        this.scrub = scrub;
        this.scrubber = scrub.newScrubber();
        this.next = next;
        this.joined = new HeldText(scrubber, AFTER_MESSAGES, AFTER_BYTES);
    }

    @Override
    public boolean holds() {
        return true;
    }

    @Override
    public MessageRelay.Delivery message(int opcode, byte[] payload, List<byte[]> frames) {
        long before = scrubber.matches();
        byte[] clean = scrubbed(payload);
        Held held = new Held(opcode, clean, frames, clean != payload);
        pending.add(held);
        heldHeap += heap(held);
        List<byte[]> released = joined.add(clean, EventText.message(clean, joined.next()));
        MessageRelay.Delivery d = forward(released, scrubber.matches() - before);
        if (d.stop() != null) {
            return d;
        }
        boolean tooBig = joined.heldBytes() > MAX_HELD_BYTES;
        if (tooBig || joined.heldUnits() > MAX_HELD_MESSAGES) {
            heldTooLong = true;
            return new MessageRelay.Delivery(d.frames(), new WebSocketFrames.Ended(
                    tooBig ? WebSocketFrames.TOO_BIG : WebSocketFrames.POLICY_VIOLATION,
                    "past " + (tooBig ? MAX_HELD_BYTES + " bytes" : MAX_HELD_MESSAGES + " messages")
                            + " held, the held messages could be part of a credential"));
        }
        return d;
    }

    @Override
    public MessageRelay.Delivery drain() {
        long before = scrubber.matches();
        return forward(joined.releaseAll(), scrubber.matches() - before);
    }

    /**
     * {@return the release of the held messages to {@code to} after {@link ResponseScrub#SILENCE_MILLIS} ms without
     * upstream bytes}, for the upstream's {@link HttpInput} (attacker pass finding 12: when a message goes depends on
     * lengths and time only); the read timeout is the idle limit again after the wait
     *
     * @param c the upstream connection
     * @param to the client
     * @param idle the upstream's idle limit
     */
    HttpInput.Silence silence(UpstreamPool.Connection c, java.io.OutputStream to, java.time.Duration idle) {
        return new HttpInput.Silence() {
            @Override
            public int holdMillis() {
                return joined.isEmpty() ? 0 : ResponseScrub.SILENCE_MILLIS;
            }

            @Override
            public void waitAtMost(int millis) {
                c.readTimeout(millis > 0 ? java.time.Duration.ofMillis(millis) : idle);
            }

            @Override
            public void silent() throws java.io.IOException {
                MessageRelay.releaseHeld(to, ScrubbedMessages.this);
            }
        };
    }

    /** A server message over the limits is recorded as {@code response_uninspectable} ({@link #ended}). */
    @Override
    public boolean recordsTooBig() {
        return true;
    }

    @Override
    public WebSocketFrames.Ended quiet() {
        if (joined.isEmpty()) {
            return null;
        }
        heldTooLong = true;
        return new WebSocketFrames.Ended(WebSocketFrames.POLICY_VIOLATION,
                "the upstream went idle while held messages could still complete a credential");
    }

    /**
     * Sends released messages on: each through the chain after the scrub, re-framed when changed.
     *
     * @param released the released messages, oldest first (a message's own array when the join changed nothing)
     * @param matches values replaced by this step, across messages (reported once)
     */
    private MessageRelay.Delivery forward(List<byte[]> released, long matches) {
        long across = matches - reported;
        reported = 0;
        if (across > 0) {
            scrub.scrubbed(scrubber.matchedNames(), 0, across);
        }
        List<byte[]> frames = new ArrayList<>();
        for (byte[] r : released) {
            Held h = pending.removeFirst();
            heldHeap -= heap(h);
            boolean changed = h.changed() || r != h.payload();
            if (h.opcode() == 1) {
                String text = new String(r, StandardCharsets.UTF_8);
                MessageRelay.Outcome o = next == null ? new MessageRelay.Outcome(false, text, changed)
                        : next.text(text);
                if (o.close()) {
                    return new MessageRelay.Delivery(frames, new WebSocketFrames.Ended(
                            WebSocketFrames.POLICY_VIOLATION, "a text message was denied by middleware or policy"));
                }
                if (o.replaced() || changed) {
                    frames.add(MessageRelay.textFrame(o.text(), false));
                } else {
                    frames.addAll(h.frames());
                }
                continue;
            }
            byte[] out = next == null ? r : next.binary(r);
            if (out == null) {
                return new MessageRelay.Delivery(frames, new WebSocketFrames.Ended(
                        WebSocketFrames.POLICY_VIOLATION, "a binary message was denied by middleware or policy"));
            }
            if (out == r && !changed) {
                frames.addAll(h.frames());
            } else {
                frames.add(MessageRelay.frame(2, out, false));
            }
        }
        return new MessageRelay.Delivery(frames, null);
    }

    /**
     * {@return the heap the held messages take, in bytes} Each held message counts its original frames, its bytes
     * (once more when the scrub changed them) and its text as {@link HeldText} keeps it (at most two bytes a byte).
     */
    @Override
    public long heldBytes() {
        return heldHeap;
    }

    private static long heap(Held h) {
        long frames = 0;
        for (byte[] f : h.frames()) {
            frames += f.length;
        }
        return frames + 3L * h.payload().length;
    }

    /** Not called: a holding policy gets every data message through {@link #message}. */
    @Override
    public MessageRelay.Outcome text(String message) {
        throw new IllegalStateException("MessageRelay gives a holding policy its messages through message()");
    }

    @Override
    public boolean uninspectedAllowed() {
        return next == null || next.uninspectedAllowed();
    }

    @Override
    public boolean readsBinary() {
        return true;
    }

    /** Not called: a holding policy gets every data message through {@link #message}. */
    @Override
    public byte[] binary(byte[] message) {
        throw new IllegalStateException("MessageRelay gives a holding policy its messages through message()");
    }

    @Override
    public byte[] control(int opcode, byte[] payload) {
        if (next != null && opcode == 8) {
            next.control(opcode, payload); // the chain's policy hears the close (its session ends normally)
        }
        if (opcode == 8) {
            if (payload.length <= 2) {
                return payload;
            }
            byte[] reason = Arrays.copyOfRange(payload, 2, payload.length);
            byte[] clean = scrubbed(reason);
            if (clean == reason) {
                return payload;
            }
            if (clean.length > MAX_CONTROL - 2) {
                return Arrays.copyOf(payload, 2); // a cut reason could end inside a UTF-8 sequence (RFC 6455, 7.1.6)
            }
            byte[] out = Arrays.copyOf(payload, 2 + clean.length);
            System.arraycopy(clean, 0, out, 2, clean.length);
            return out;
        }
        byte[] clean = scrubbed(payload);
        return clean.length > MAX_CONTROL ? Arrays.copyOf(clean, MAX_CONTROL) : clean;
    }

    /**
     * Records how the direction ended: a message over the limit, or held messages past a bound, were not relayed.
     *
     * @param ended how {@link MessageRelay#relay} ended
     */
    void ended(WebSocketFrames.Ended ended) {
        if (ended.closeStatus() == WebSocketFrames.TOO_BIG || heldTooLong) {
            scrub.uninspectable(ScrubbingRelay.UNINSPECTABLE, false);
        }
    }

    /** {@return {@code bytes} scrubbed, or {@code bytes} itself when nothing was replaced; reports a replacement} */
    private byte[] scrubbed(byte[] bytes) {
        long before = scrubber.matches();
        byte[] clean = scrubber.scrubAll(bytes);
        long found = scrubber.matches() - before;
        if (found == 0) {
            return bytes;
        }
        scrub.scrubbed(scrubber.matchedNames(), 0, found);
        reported += found;
        return clean;
    }
}
