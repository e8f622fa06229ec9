package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import java.util.Objects;
import org.apiguardian.api.API;

/**
 * One complete text message of a WebSocket session, in one direction (wire {@code WebSocketMessage} with its
 * {@code text} payload; RFC 6455, section 5.6). Stages receive text messages only: binary messages and control
 * frames are never sent to a stage (they follow the endpoint's {@code binary_messages} rule).
 *
 * @param sequence the session-wide sequence number, from 1, strictly increasing per stage stream; numbers may be
 *     missing (a message of the other direction, or one an earlier stage denied)
 * @param text the message, as the previous stage left it; at most 4 MiB of UTF-8
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record WebSocketMessage(long sequence, String text) {
    /**
     * @throws NullPointerException if {@code text} is {@code null}
     * @throws IllegalArgumentException if {@code sequence} is below 1
     */
    public WebSocketMessage {
        Objects.requireNonNull(text, "text");
        if (sequence < 1) {
            throw new IllegalArgumentException("sequence " + sequence + " is below 1");
        }
    }

    /** {@return the sequence and length only: the text may hold secrets} */
    @Override
    public String toString() {
        return "WebSocketMessage[" + sequence + ", " + text.length() + " chars]";
    }
}
