package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import java.util.List;
import java.util.Objects;

/**
 * The body-aware L7 policy re-check the fold runs after every accepted body replacement, before the next stage or
 * upstream (RFC 0009, "Operation phases and placement": "After a stage replaces the request body, OpenShell
 * re-evaluates body-aware GraphQL, JSON-RPC, or MCP policy"). The proxy plugs its protocol checks in here; the engine
 * only enforces the outcome:
 * <ul>
 *   <li>{@link Verdict.Pass}: the chain continues;</li>
 *   <li>{@link Verdict.Deny}: an enforced denial stops the chain and denies
 *       ({@value DenyResponse#POLICY_DENIED});</li>
 *   <li>{@link Verdict.AuditDeny}: an audit-mode denial is recorded, the remaining chain stops, and the transformed
 *       request is forwarded;</li>
 *   <li>an exception or a {@code null} verdict (evaluation failure, unparseable replacement) is a hard denial
 *       ({@value DenyResponse#POLICY_FAILED}), whatever the stage's {@code on_error}.</li>
 * </ul>
 * Implementations must be thread-safe.
 */
@FunctionalInterface
public interface BodyRecheck {
    /**
     * Re-checks a transformed request.
     *
     * @param request the request as it now stands; never {@code null}
     * @return the verdict; never {@code null}
     */
    Verdict recheck(Request request);

    /** {@return a re-check that passes everything: for endpoints without a body-aware protocol} */
    static BodyRecheck none() {
        return request -> Verdict.PASS;
    }

    /**
     * A transformed request to re-check.
     *
     * @param configKey the config key of the stage that replaced the body
     * @param bindingId that stage's binding ID
     * @param target the admitted target
     * @param headers the complete header list after that stage
     * @param body the replacement body
     */
    record Request(String configKey, BindingId bindingId, HttpRequestTarget target, List<HttpHeader> headers,
                   Body body) {
        /** @throws NullPointerException if any part is {@code null} */
        public Request {
            Objects.requireNonNull(configKey, "configKey");
            Objects.requireNonNull(bindingId, "bindingId");
            Objects.requireNonNull(target, "target");
            headers = List.copyOf(headers);
            Objects.requireNonNull(body, "body");
        }
    }

    /** The re-check's answer. */
    sealed interface Verdict {
        /** The shared pass verdict. */
        Verdict PASS = new Pass();

        /** The transformed request satisfies policy. */
        record Pass() implements Verdict {
        }

        /**
         * Enforced policy denies the transformed request.
         *
         * @param reasonCode a {@code [a-z][a-z0-9_]*} code; an invalid one is replaced by
         *     {@value PlatformCodes#BODY_RECHECK_DENIED}
         */
        record Deny(String reasonCode) implements Verdict {
            /** @throws NullPointerException if {@code reasonCode} is {@code null} */
            public Deny {
                Objects.requireNonNull(reasonCode, "reasonCode");
            }
        }

        /**
         * Audit-mode policy would deny: record it, stop the chain, forward the transformed request.
         *
         * @param reasonCode a {@code [a-z][a-z0-9_]*} code; an invalid one is replaced by
         *     {@value PlatformCodes#BODY_RECHECK_DENIED}
         */
        record AuditDeny(String reasonCode) implements Verdict {
            /** @throws NullPointerException if {@code reasonCode} is {@code null} */
            public AuditDeny {
                Objects.requireNonNull(reasonCode, "reasonCode");
            }
        }
    }
}
