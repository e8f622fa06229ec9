package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apiguardian.api.API;

/**
 * A response stage's answer to its preflight (wire {@code HttpResponsePreflightDecision}): skip the response, inspect
 * it with a body mode and head mutations, or block its delivery.
 *
 * <p>{@link Action#BLOCK_DELIVERY} is a successful decision enforced whatever the stage's {@code on_error}: the client
 * gets a platform error stating that the upstream request may have completed, and no byte of the upstream response.
 * Later stages are not asked. Findings and metadata are validated as for requests (at most 32 findings, 64 metadata
 * entries of 32 KiB in all); the reason is never shown to the sandbox or written to security logs.
 *
 * @param action what the stage does
 * @param bodyMode the body mode with {@link Action#INSPECT}; ignored otherwise
 * @param headerMutations with {@link Action#INSPECT}: response-header writes and removals, validated atomically
 *     against the protected response set (routing, credential, framing, coding, range, hop-by-hop; integrity fields
 *     removable, not writable); at most 64
 * @param reason a free-form diagnostic, at most 4096 bytes; never shown
 * @param reasonCode an optional code {@code [a-z][a-z0-9_]*}, at most 64 bytes; the client may see it with a block
 * @param findings audit-safe findings
 * @param metadata non-secret metadata
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record HttpResponsePreflightDecision(Action action, HttpResponseBodyMode bodyMode,
                                            List<HeaderMutation> headerMutations, String reason,
                                            Optional<String> reasonCode, List<Finding> findings,
                                            Map<String, String> metadata) {
    /** The preflight action. An open enum: never switch over it without {@code default}. */
    @API(status = EXPERIMENTAL, since = "0.2")
    public enum Action {
        /** Opt out for this response: it passes this stage unchanged, no body unit follows. */
        SKIP,
        /** Inspect with {@link #bodyMode()} and apply {@link #headerMutations()}. */
        INSPECT,
        /** Withhold the response from the sandbox. */
        BLOCK_DELIVERY
    }

    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public HttpResponsePreflightDecision {
        Objects.requireNonNull(action, "action");
        Objects.requireNonNull(bodyMode, "bodyMode");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(reasonCode, "reasonCode");
        headerMutations = List.copyOf(headerMutations);
        findings = List.copyOf(findings);
        metadata = Map.copyOf(metadata);
    }

    /** {@return a skip} */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static HttpResponsePreflightDecision skip() {
        return new HttpResponsePreflightDecision(Action.SKIP, HttpResponseBodyMode.HEADERS_ONLY, List.of(), "",
                Optional.empty(), List.of(), Map.of());
    }

    /**
     * {@return an inspection in {@code mode} with {@code mutations}}
     *
     * @param mode the body mode; must be one of the preflight's permitted modes
     * @param mutations the head mutations, in order
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static HttpResponsePreflightDecision inspect(HttpResponseBodyMode mode, HeaderMutation... mutations) {
        return new HttpResponsePreflightDecision(Action.INSPECT, mode, List.of(mutations), "", Optional.empty(),
                List.of(), Map.of());
    }

    /**
     * {@return a block of the response's delivery}
     *
     * @param reasonCode a code {@code [a-z][a-z0-9_]*} the client may see
     * @param findings what was found
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static HttpResponsePreflightDecision blockDelivery(String reasonCode, Finding... findings) {
        return new HttpResponsePreflightDecision(Action.BLOCK_DELIVERY, HttpResponseBodyMode.HEADERS_ONLY,
                List.of(), "", Optional.of(reasonCode), List.of(findings), Map.of());
    }

    /** {@return this decision with {@code more} findings added} @param more the findings */
    @API(status = EXPERIMENTAL, since = "0.2")
    public HttpResponsePreflightDecision withFindings(List<Finding> more) {
        List<Finding> all = new java.util.ArrayList<>(findings);
        all.addAll(more);
        return new HttpResponsePreflightDecision(action, bodyMode, headerMutations, reason, reasonCode, all,
                metadata);
    }

    /** {@return the action, mode and counts only} */
    @Override
    public String toString() {
        return "HttpResponsePreflightDecision[" + action + ", " + bodyMode + ", " + headerMutations.size()
                + " mutations, " + findings.size() + " findings]";
    }
}
