package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Optional;
import java.util.Objects;

/**
 * The credential step (RFC 0009, "Operation phases and placement": "Credential injection", after the middleware chain
 * and route selection, before upstream forwarding): replaces placeholders with real secrets in header values and in
 * the query. The credentials work fills it; {@link #identity()} changes nothing.
 *
 * <p>It sees the headers the chain left (or, with no chain, the headers as received, names lowercased) and the raw
 * query. When the returned headers equal the given ones and the query is unchanged, the proxy forwards the original
 * field lines byte for byte; otherwise it writes the returned fields (framing and hop-by-hop fields in the result are
 * ignored and rebuilt by the proxy; {@code Host} must not change) and the new query. Runs on the connection's virtual
 * thread; must be thread-safe. A {@link RuntimeException} fails the request with 502.
 */
@FunctionalInterface
public interface CredentialInjection {
    /**
     * Replaces placeholders in one request about to be forwarded, then runs the post-credentials stages the plan
     * selected (request signing), with the body when the proxy buffered it so that signing can cover it.
     *
     * @param plan the plan {@link RequestHook#plan} returned for this request
     * @param request the admitted request (its headers are the ones received, before the chain)
     * @param headers the headers about to be forwarded, in order
     * @param rawQuery the raw query without {@code ?}, empty when there is none; never log it
     * @param body the buffered body about to be forwarded, or empty when the body streams through unbuffered or
     *     there is none (a bodiless request, with or without a chain)
     * @return forward (possibly with real credentials) or refuse; never {@code null}
     */
    Outcome inject(RequestPlan plan, ProxyRequest request, List<HttpHeader> headers, String rawQuery,
                   Optional<Body> body);

    /** {@return the step that changes nothing} */
    static CredentialInjection identity() {
        return (plan, request, headers, rawQuery, body) -> new Outcome.Forward(headers, rawQuery);
    }

    /** What the credential step decided. */
    sealed interface Outcome {
        /**
         * Forward with these headers and query. They may hold secrets: never log them.
         *
         * @param headers the headers to forward
         * @param rawQuery the query to forward, without {@code ?}; empty for none
         * @param injected the credential values put into the request: the response to it is scrubbed of them
         */
        record Forward(List<HttpHeader> headers, String rawQuery, InjectedCredentials injected) implements Outcome {
            /**
             * Checks the parts.
             *
             * @throws NullPointerException if a part is {@code null}
             */
            public Forward {
                headers = List.copyOf(headers);
                Objects.requireNonNull(rawQuery, "rawQuery");
                Objects.requireNonNull(injected, "injected");
            }

            /**
             * Forward with no credential injected.
             *
             * @param headers the headers to forward
             * @param rawQuery the query to forward, without {@code ?}; empty for none
             */
            public Forward(List<HttpHeader> headers, String rawQuery) {
                this(headers, rawQuery, InjectedCredentials.none());
            }

            /** {@return counts and credential names only: header values and the query may hold secrets} */
            @Override
            public String toString() {
                return "Forward[" + headers.size() + " headers, query " + rawQuery.length() + " chars, "
                        + injected + "]";
            }
        }

        /**
         * Refuse the request, for example because a placeholder names an unknown credential or one not bound to the
         * admitted host. The client gets {@code status} and {@code {"error": error, "detail": detail}}.
         *
         * @param status a 4xx or 5xx status, typically 403
         * @param error a platform code such as {@code credential_unknown}
         * @param detail a safe message that may name the credential but never its value
         */
        record Refuse(int status, String error, String detail) implements Outcome {
            /**
             * Checks the parts.
             *
             * @throws IllegalArgumentException if {@code status} is outside 400..599
             * @throws NullPointerException if a string is {@code null}
             */
            public Refuse {
                if (status < 400 || status > 599) {
                    throw new IllegalArgumentException("refusal status " + status + " is outside 400..599");
                }
                Objects.requireNonNull(error, "error");
                Objects.requireNonNull(detail, "detail");
            }
        }
    }
}
