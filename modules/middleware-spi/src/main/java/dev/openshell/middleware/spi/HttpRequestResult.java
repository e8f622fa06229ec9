package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apiguardian.api.API;

/**
 * A stage's answer (RFC 0009, "The middleware contract": {@code HttpRequestResult}).
 *
 * <p>{@code body} present means "replace the body with this" (present and empty means "replace with nothing");
 * absent means "keep the previous body" (the wire's {@code has_body}). The host checks every part against
 * {@link EnvelopeLimits} before applying any of it; a result that breaks a limit or a header rule is a stage failure.
 *
 * @param decision allow or deny
 * @param reason a short reason, at most {@link EnvelopeLimits#MAX_REASON_BYTES}; text from external services is
 *     untrusted and never shown as is
 * @param reasonCode an optional code, safe to log: {@code [a-z][a-z0-9_]*}, 1 to 64 characters (any other text
 *     fails the stage with {@code result_invalid_reason_code})
 * @param body the replacement body, if any
 * @param headerMutations ordered header writes and removals
 * @param findings audit-safe findings
 * @param metadata string annotations; the host stores them under the policy's config key
 */
@API(status = STABLE, since = "0.1")
public record HttpRequestResult(Decision decision, String reason, Optional<String> reasonCode, Optional<Body> body,
                                List<HeaderMutation> headerMutations, List<Finding> findings,
                                Map<String, String> metadata) {
    /** @throws NullPointerException if any part is {@code null} */
    @API(status = STABLE, since = "0.1")
    public HttpRequestResult {
        Objects.requireNonNull(decision, "decision");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(reasonCode, "reasonCode");
        Objects.requireNonNull(body, "body");
        headerMutations = List.copyOf(headerMutations);
        findings = List.copyOf(findings);
        metadata = Map.copyOf(metadata);
    }

    /** {@return an allow that changes nothing} */
    @API(status = STABLE, since = "0.1")
    public static HttpRequestResult allow() {
        return builder(Decision.ALLOW).build();
    }

    /** {@return a deny} @param reason a short reason @param reasonCode a code {@code [a-z][a-z0-9_]*} */
    @API(status = STABLE, since = "0.1")
    public static HttpRequestResult deny(String reason, String reasonCode) {
        return builder(Decision.DENY).reason(reason).reasonCode(reasonCode).build();
    }

    /** {@return a builder} @param decision the decision */
    @API(status = STABLE, since = "0.1")
    public static Builder builder(Decision decision) {
        return new Builder(decision);
    }

    /** Assembles a result; not thread-safe. */
    @API(status = STABLE, since = "0.1")
    public static final class Builder {
        private final Decision decision;
        private String reason = "";
        private String reasonCode;
        private Body body;
        private final List<HeaderMutation> mutations = new ArrayList<>();
        private final List<Finding> findings = new ArrayList<>();
        private final Map<String, String> metadata = new LinkedHashMap<>();

        private Builder(Decision decision) {
            this.decision = Objects.requireNonNull(decision, "decision");
        }

        /** {@return this} @param reason the reason */
        public Builder reason(String reason) {
            this.reason = Objects.requireNonNull(reason, "reason");
            return this;
        }

        /** {@return this} @param reasonCode the code */
        public Builder reasonCode(String reasonCode) {
            this.reasonCode = Objects.requireNonNull(reasonCode, "reasonCode");
            return this;
        }

        /** {@return this} @param body the replacement body */
        public Builder body(Body body) {
            this.body = Objects.requireNonNull(body, "body");
            return this;
        }

        /** {@return this} @param mutation a header mutation, applied after the ones added before */
        public Builder mutation(HeaderMutation mutation) {
            mutations.add(Objects.requireNonNull(mutation, "mutation"));
            return this;
        }

        /** {@return this} @param finding a finding */
        public Builder finding(Finding finding) {
            findings.add(Objects.requireNonNull(finding, "finding"));
            return this;
        }

        /** {@return this} @param key the key @param value the value */
        public Builder metadata(String key, String value) {
            metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
            return this;
        }

        /** {@return the result} */
        public HttpRequestResult build() {
            return new HttpRequestResult(decision, reason, Optional.ofNullable(reasonCode), Optional.ofNullable(body),
                    mutations, findings, metadata);
        }
    }

    /** {@return a summary without reason text, body content or metadata values} */
    @Override
    public String toString() {
        return "HttpRequestResult[" + decision + reasonCode.map(c -> ", " + c).orElse("")
                + body.map(b -> ", replaced " + b).orElse("") + ", " + headerMutations.size() + " mutations, "
                + findings.size() + " findings, " + metadata.size() + " metadata]";
    }
}
