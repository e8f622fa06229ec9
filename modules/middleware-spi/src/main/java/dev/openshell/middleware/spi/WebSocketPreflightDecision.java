package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * A stage's answer to a {@link WebSocketPreflight} (wire {@code WebSocketPreflightDecision}).
 *
 * @param action inspect, skip or deny the session
 * @param reason a free-text reason for operators, at most 4096 bytes; never shown to the client
 * @param reasonCode a stable code ({@code [a-z][a-z0-9_]*}, at most 64 bytes), empty when none
 * @param findings what the stage found, at most 32
 * @param metadata audit metadata, at most 64 entries
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record WebSocketPreflightDecision(Action action, String reason, String reasonCode, List<Finding> findings,
                                         Map<String, String> metadata) {
    /**
     * The stage's scoping decision (wire {@code WebSocketPreflightAction}: {@code INSPECT} = 1, {@code SKIP} = 2,
     * {@code DENY} = 3). An open enum: keep a {@code default} branch when you {@code switch} over it.
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public enum Action {
        /** The stage receives the session's messages in this direction. */
        INSPECT,
        /** The stage declines: its stream ends successfully ({@link SessionEndReason#STAGE_SKIPPED}). */
        SKIP,
        /** The upgrade is refused before the upstream is contacted, whatever the stage's {@code on_error}. */
        DENY
    }

    /** @throws NullPointerException if any part is {@code null} */
    public WebSocketPreflightDecision {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(reasonCode, "reasonCode");
        findings = List.copyOf(findings);
        metadata = Map.copyOf(metadata);
    }

    /** {@return a decision to inspect the session} */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static WebSocketPreflightDecision inspect() {
        return new WebSocketPreflightDecision(Action.INSPECT, "", "", List.of(), Map.of());
    }

    /** {@return a decision to skip the session} */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static WebSocketPreflightDecision skip() {
        return new WebSocketPreflightDecision(Action.SKIP, "", "", List.of(), Map.of());
    }

    /**
     * {@return a decision to deny the session}
     *
     * @param reason for operators
     * @param reasonCode a stable code
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static WebSocketPreflightDecision deny(String reason, String reasonCode) {
        return new WebSocketPreflightDecision(Action.DENY, reason, reasonCode, List.of(), Map.of());
    }
}
