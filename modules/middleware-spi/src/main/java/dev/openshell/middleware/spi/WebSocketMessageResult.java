package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apiguardian.api.API;

/**
 * A stage's answer to one {@link WebSocketMessage} (wire {@code WebSocketMessageResult}).
 *
 * @param sequence the message's sequence, echoed; another number is a protocol error of the stage
 * @param decision allow (possibly replaced) or deny; a denial closes the session toward both peers with close code
 *     1008 and the message is never forwarded
 * @param replacementText the message to forward instead (the same variant: text), at most 4 MiB of UTF-8
 * @param reason for operators, at most 4096 bytes; never shown to a peer
 * @param reasonCode a stable code ({@code [a-z][a-z0-9_]*}, at most 64 bytes), empty when none
 * @param findings what the stage found, at most 32
 * @param metadata audit metadata, at most 64 entries
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record WebSocketMessageResult(long sequence, Decision decision, Optional<String> replacementText,
                                     String reason, String reasonCode, List<Finding> findings,
                                     Map<String, String> metadata) {
    /** @throws NullPointerException if any part is {@code null} */
    public WebSocketMessageResult {
        Objects.requireNonNull(decision, "decision");
        Objects.requireNonNull(replacementText, "replacementText");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(reasonCode, "reasonCode");
        findings = List.copyOf(findings);
        metadata = Map.copyOf(metadata);
    }

    /** {@return allow the message unchanged} @param sequence the message's sequence */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static WebSocketMessageResult allow(long sequence) {
        return new WebSocketMessageResult(sequence, Decision.ALLOW, Optional.empty(), "", "", List.of(), Map.of());
    }

    /**
     * {@return allow the message, replaced}
     *
     * @param sequence the message's sequence
     * @param text the replacement
     * @param findings what was found
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static WebSocketMessageResult replace(long sequence, String text, List<Finding> findings) {
        return new WebSocketMessageResult(sequence, Decision.ALLOW, Optional.of(text), "", "", findings, Map.of());
    }

    /**
     * {@return deny the message}
     *
     * @param sequence the message's sequence
     * @param reason for operators
     * @param reasonCode a stable code
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static WebSocketMessageResult deny(long sequence, String reason, String reasonCode) {
        return new WebSocketMessageResult(sequence, Decision.DENY, Optional.empty(), reason, reasonCode, List.of(),
                Map.of());
    }

    /** {@return the decision and code only: the replacement may hold secrets} */
    @Override
    public String toString() {
        return "WebSocketMessageResult[" + sequence + ", " + decision + ", " + reasonCode
                + (replacementText.isPresent() ? ", replaced" : "") + "]";
    }
}
