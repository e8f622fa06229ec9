package dev.openshell.supervisor.proxy;

import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the proxy tells the audit step about an exchange ({@link PolicySteps.Audit}): facts the proxy decided by its own
 * rules (HTTP framing, limits, uninspectable bodies, response scrubbing), as values. The audit step turns each into
 * OCSF events and metrics ({@code docs/observability.md}); it never changes what the proxy does. No record carries
 * request content, header values, query strings or secrets.
 */
public sealed interface ExchangeRecord {
    /**
     * A request or connection the proxy refused by one of its own rules: network policy and SSRF admission, HTTP/1.1
     * framing, resource limits, upstream connect/TLS/response failures, TLS interception, internal faults. Exactly
     * once per refusal, on the thread that decided it (a watchdog thread for a deadline), before or while the answer
     * is sent. Refusals a policy step decided itself (an L7 or middleware denial, a credential refusal) are that
     * step's to record and do not come here.
     *
     * @param refusal what was refused, why, and what the client got
     */
    record Refused(ProxyRefusal refusal) implements ExchangeRecord {
        /** @throws NullPointerException if {@code refusal} is {@code null} */
        public Refused {
            Objects.requireNonNull(refusal, "refusal");
        }
    }

    /**
     * A request body buffered for the chain waited for room in the body buffer budget (0 when there was room at once;
     * bounded by the proxy's body buffer wait). Once per such request.
     *
     * @param nanos the wait, in nanoseconds
     */
    record BodyBufferWaited(long nanos) implements ExchangeRecord {
    }

    /**
     * A request body was buffered whole for the policy steps. Once per such request, before the steps see it.
     *
     * @param bytes the body's length
     */
    record BodyBuffered(long bytes) implements ExchangeRecord {
    }

    /**
     * A request the proxy answered itself without forwarding it: {@code TRACE} to an endpoint without
     * {@code trace: allow} ({@code 405}, {@code method_not_allowed}), a {@code TRACE} that would carry a credential
     * ({@code 403}, {@code credential_trace_not_allowed}), or {@code OPTIONS} (or an allowed {@code TRACE}) with
     * {@code Max-Forwards: 0} ({@code 200}, {@code max_forwards_exhausted}; RFC 9110 section 7.6.2).
     *
     * @param request the request
     * @param status the status the client got
     * @param code the platform code
     */
    record AnsweredLocally(ProxyRequest request, int status, String code) implements ExchangeRecord {
        /** @throws NullPointerException if a part is {@code null} */
        public AnsweredLocally {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(code, "code");
        }
    }

    /**
     * A request whose body (or upgraded bytes) no stage could inspect ({@link Uninspectable}): the audit step emits
     * the finding of every affected stage (RFC 0009, "Observability": bypass or denial).
     *
     * @param request the request
     * @param what why, and whether it was relayed
     */
    record Uninspected(ProxyRequest request, Uninspectable what) implements ExchangeRecord {
        /** @throws NullPointerException if a part is {@code null} */
        public Uninspected {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(what, "what");
        }
    }

    /**
     * A response from which injected credential values were removed before it reached the client
     * ({@code docs/credentials.md}); once per such response, before its last bytes go to the client.
     *
     * @param request the request the response answers
     * @param credentials the names of the credentials found, sorted
     * @param headerMatches how many values were replaced in the status line and header fields
     * @param bodyMatches how many values were replaced in the body
     */
    record ResponseScrubbed(ProxyRequest request, Set<String> credentials, long headerMatches, long bodyMatches)
            implements ExchangeRecord {
        /** @throws NullPointerException if a part is {@code null} */
        public ResponseScrubbed {
            Objects.requireNonNull(request, "request");
            credentials = Collections.unmodifiableSortedSet(new TreeSet<>(credentials));
        }
    }

    /**
     * The response to a credential-bearing request whose body the proxy could not scan for the injected values: a
     * content coding other than {@link InjectedCredentials#DECODABLE_CODINGS}, or a compressed body that does not
     * decode.
     *
     * @param request the request the response answers
     * @param code {@code response_uninspectable}
     * @param relayed whether the body was relayed unscanned (every credential allows it) rather than answered
     *     {@code 502} (or, when the failure came after the head was sent, cut off)
     */
    record ResponseUninspectable(ProxyRequest request, String code, boolean relayed) implements ExchangeRecord {
        /** @throws NullPointerException if a part is {@code null} */
        public ResponseUninspectable {
            Objects.requireNonNull(request, "request");
            Objects.requireNonNull(code, "code");
        }
    }

    /**
     * Header fields the response scrub dropped from one response head (final, interim {@code 1xx} or {@code 101}) of
     * a credential-bearing exchange because a parameter or RFC 2047 encoded word of their value is declared in a
     * charset the runtime cannot decode (UTF-7, {@code unicode_escape}, an unknown name, octets the charset rejects):
     * what a client that knows the charset reads there is not known, so the field is not relayed
     * ({@code docs/credentials.md}, "header fields"). Once per such head, before it goes to the client.
     *
     * @param request the request the response answers
     * @param fields the lowercase names of the dropped fields, sorted, each once; not empty; never their values
     */
    record ResponseFieldsUnreadable(ProxyRequest request, List<String> fields) implements ExchangeRecord {
        /**
         * @throws NullPointerException if a part is {@code null}
         * @throws IllegalArgumentException if {@code fields} is empty
         */
        public ResponseFieldsUnreadable {
            Objects.requireNonNull(request, "request");
            fields = List.copyOf(new TreeSet<>(fields));
            if (fields.isEmpty()) {
                throw new IllegalArgumentException("no field was dropped");
            }
        }
    }

    /**
     * An exchange whose interim {@code 1xx} heads were withheld from the client because a {@code fail_closed}
     * response stage is selected for it ({@link PolicySteps.ResponseChain#withholdsInterim}): once per exchange, at
     * the first withheld head; the final response is relayed (or withheld) by the stages as usual.
     *
     * @param request the request the interim heads answered
     * @param status the status of the first withheld head, 102 to 199
     */
    record InterimWithheld(ProxyRequest request, int status) implements ExchangeRecord {
        /**
         * @throws NullPointerException if {@code request} is {@code null}
         * @throws IllegalArgumentException if {@code status} is not an interim status other than 100 and 101
         */
        public InterimWithheld {
            Objects.requireNonNull(request, "request");
            if (status < 102 || status > 199) {
                throw new IllegalArgumentException("status " + status + " is not a withheld interim status");
            }
        }
    }
}
