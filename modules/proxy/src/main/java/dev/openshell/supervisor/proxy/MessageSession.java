package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.SessionEndReason;

/**
 * The middleware message chain of one WebSocket session, as the proxy's relay drives it after the upstream's
 * {@code 101} ({@code WEBSOCKET_MESSAGE}; {@code docs/external-middleware.md}, "WebSocket messages"). Made by the
 * {@link PolicySteps.Sessions} step before the upstream is contacted (its preflight ran there). The two directions
 * call their methods from their own relay thread, each in message order; the implementation numbers messages
 * session-wide and audits every decision itself.
 */
public interface MessageSession {
    /** The direction of a message. */
    enum Direction {
        /** Sandbox client to upstream ({@code PRE_CREDENTIALS}). */
        TO_UPSTREAM,
        /** Upstream to sandbox client ({@code PRE_RETURN}). */
        TO_CLIENT
    }

    /**
     * The verdict on one text message.
     *
     * @param forward whether to forward it; {@code false} closes the session toward both peers with 1008
     * @param text the text to forward (the original or a replacement); {@code null} when not forwarding
     * @param replaced whether {@code text} replaces the original (it is re-framed as one text message)
     */
    record Verdict(boolean forward, String text, boolean replaced) {
        /** {@return the flags only} */
        @Override
        public String toString() {
            return "Verdict[forward " + forward + ", replaced " + replaced + "]";
        }
    }

    /** {@return whether the relay must parse this direction's frames (a stage reads them, or frames are refused)} */
    boolean inspects(Direction direction);

    /** The upstream accepted the upgrade. @param selectedSubprotocol empty when none */
    void start(String selectedSubprotocol);

    /**
     * Runs one complete text message through the direction's stages.
     *
     * @param direction the direction
     * @param text the message
     * @return the verdict
     */
    Verdict text(Direction direction, String text);

    /**
     * A binary message or a control-frame payload that no stage reads.
     *
     * @param direction the direction
     * @return whether it may pass ({@code binary_messages: allow_uninspected}; coverage recorded once per session);
     *     {@code false} closes the session with 1008, audited
     */
    boolean uninspected(Direction direction);

    /**
     * Ends the session's streams (at most once; later calls do nothing) and records the session's end.
     *
     * @param reason why
     */
    void end(SessionEndReason reason);
}
