package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** What {@link RequestHook#evaluate} decided for a request whose body was buffered. */
public sealed interface HookResult {
    /**
     * Forward the request as the chain left it.
     *
     * <p>The proxy rebuilds the request from these headers: it drops Content-Length, Transfer-Encoding, Trailer, TE,
     * Expect, Keep-Alive, Proxy-Connection, Proxy-Authorization, Connection and every Connection-nominated field,
     * then adds exactly one Content-Length for {@code body} (RFC 9112 section 6.2). The {@code Host} fields must be
     * the ones the request arrived with: the hook cannot re-route a request.
     *
     * @param headers the fields to forward, in order; names are written as given
     * @param body the body to forward
     */
    record Forward(List<HttpHeader> headers, Body body) implements HookResult {
        /**
         * Checks the parts.
         *
         * @throws NullPointerException if any part is {@code null}
         */
        public Forward {
            headers = List.copyOf(headers);
            Objects.requireNonNull(body, "body");
        }
    }

    /**
     * Refuse the request. The client gets {@code status} with the JSON body
     * {@code {"error": error, "detail": detail, ...extra}}; the connection stays open (the body was consumed) unless
     * {@code close} says otherwise.
     *
     * @param status a 4xx or 5xx status
     * @param error a short stable code, for example {@code middleware_denied}
     * @param detail a short safe explanation; it must not quote request content, matched values or secrets
     * @param extra further platform-owned string members, in order, for example {@code config_key},
     *     {@code binding_id}, {@code reason_code}; never request content
     * @param close whether the answer carries {@code Connection: close} and the proxy closes the connection after
     *     it (an L7 policy denial does: {@code docs/policy-reference.md}, "L7 policy", decision 5)
     */
    record Deny(int status, String error, String detail, Map<String, String> extra, boolean close)
            implements HookResult {
        /**
         * Checks the parts.
         *
         * @throws IllegalArgumentException if {@code status} is not 400..599
         * @throws NullPointerException if a string is {@code null}
         */
        public Deny {
            if (status < 400 || status > 599) {
                throw new IllegalArgumentException("deny status " + status + " is outside 400..599");
            }
            Objects.requireNonNull(error, "error");
            Objects.requireNonNull(detail, "detail");
            extra = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(extra));
        }

        /**
         * A refusal that keeps the connection open.
         *
         * @param status a 4xx or 5xx status
         * @param error the code
         * @param detail the safe explanation
         * @param extra further platform-owned members
         */
        public Deny(int status, String error, String detail, Map<String, String> extra) {
            this(status, error, detail, extra, false);
        }

        /**
         * A refusal with no extra members.
         *
         * @param status a 4xx or 5xx status
         * @param error the code
         * @param detail the safe explanation
         */
        public Deny(int status, String error, String detail) {
            this(status, error, detail, Map.of());
        }
    }
}
