package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

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
 * <p>Limits: a value split across two messages (the end of one, the start of the next) is not found: no message is
 * held for the next one (unlike {@link EventSplits}), since a request-response protocol whose server waits for the
 * client's answer would stall. A control frame's payload that grows over 125 bytes when scrubbed is cut to 125 bytes
 * (a close frame keeps only its status).
 * Not thread-safe: one direction, one thread.
 */
final class ScrubbedMessages implements MessageRelay.Policy {
    /** The largest control frame payload (RFC 6455, section 5.5). */
    private static final int MAX_CONTROL = 125;

    private final ResponseScrub scrub;
    private final SecretScrubber scrubber;
    private final MessageRelay.Policy next;

    /**
     * @param scrub what the upgrade's response is scrubbed of, and where its records go
     * @param next the direction's message chain after the scrub, or {@code null} when none reads it
     */
    ScrubbedMessages(ResponseScrub scrub, MessageRelay.Policy next) {
        this.scrub = scrub;
        this.scrubber = scrub.newScrubber();
        this.next = next;
    }

    @Override
    public MessageRelay.Outcome text(String message) {
        byte[] raw = message.getBytes(StandardCharsets.UTF_8);
        byte[] clean = scrubbed(raw);
        boolean changed = clean != raw;
        String text = changed ? new String(clean, StandardCharsets.UTF_8) : message;
        if (next == null) {
            return new MessageRelay.Outcome(false, text, changed);
        }
        MessageRelay.Outcome o = next.text(text);
        return o.close() || o.replaced() || !changed ? o : new MessageRelay.Outcome(false, o.text(), true);
    }

    @Override
    public boolean uninspectedAllowed() {
        return next == null || next.uninspectedAllowed();
    }

    @Override
    public boolean readsBinary() {
        return true;
    }

    @Override
    public byte[] binary(byte[] message) {
        byte[] clean = scrubbed(message);
        if (next == null) {
            return clean;
        }
        return next.binary(clean);
    }

    @Override
    public byte[] control(int opcode, byte[] payload) {
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
     * Records how the direction ended: a message over the limit was not relayed.
     *
     * @param ended how {@link MessageRelay#relay} ended
     */
    void ended(WebSocketFrames.Ended ended) {
        if (ended.closeStatus() == WebSocketFrames.TOO_BIG) {
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
        return clean;
    }
}
