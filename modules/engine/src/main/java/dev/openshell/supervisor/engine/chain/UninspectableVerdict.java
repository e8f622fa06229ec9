package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import java.util.List;
import java.util.Objects;

/**
 * What to do with a request that matches a chain but cannot be inspected (RFC 0009, "Operation phases and
 * placement": "If any stage is fail_closed, the request is denied. If every matching stage is fail_open, OpenShell
 * relays the request and emits a bypass DetectionFinding"). See {@link Chain#uninspectable}.
 */
public sealed interface UninspectableVerdict {
    /** {@return one record per matching stage concerned} */
    List<StageRecord> stages();

    /**
     * A matching stage is {@code fail_closed}: deny.
     *
     * @param response the 403, naming the first {@code fail_closed} stage in order
     * @param stages a {@link StageResult#FAILED_CLOSED} record for every {@code fail_closed} stage
     */
    record Deny(DenyResponse response, List<StageRecord> stages) implements UninspectableVerdict {
        /** @throws NullPointerException if any part is {@code null} */
        public Deny {
            Objects.requireNonNull(response, "response");
            stages = List.copyOf(stages);
        }
    }

    /**
     * Every matching stage is {@code fail_open}: relay the request unchanged.
     *
     * @param stages a {@link StageResult#BYPASSED} record for every stage, each with an
     *     {@value PlatformCodes#FINDING_UNINSPECTABLE_BYPASS} finding
     */
    record Relay(List<StageRecord> stages) implements UninspectableVerdict {
        /** @throws NullPointerException if {@code stages} is {@code null} */
        public Relay {
            stages = List.copyOf(stages);
        }
    }
}
