package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The policy steps of an exchange, bound by the runtime once per policy generation (RFC 0009, "Registration and
 * delivery": one request, one generation). The proxy reads the current value once per exchange and runs every step
 * of that exchange with it, so a reload between two requests on one keep-alive connection never mixes generations
 * within one exchange; the proxy's pipeline ({@code docs/proxy.md}, "The exchange pipeline") is the only caller.
 *
 * <p>Each step is a small type with a typed input and output. A step that needs its own per-exchange facts (the
 * selected chain, the audit facts) makes them in {@link Plan} as a value of its type {@code P}, which the pipeline
 * hands, unchanged and unread, to the later steps of the same exchange: no step keeps per-request state, and nothing
 * is downcast. Steps run on the exchange's virtual thread, may block, and are thread-safe. A
 * {@link RuntimeException} from a step fails the exchange closed (500, or 502 for credentials): the steps apply
 * {@code on_error} themselves, so an exception is a bug.
 *
 * @param <P> the runtime's per-exchange plan (opaque to the proxy)
 * @param generation the policy generation number these steps belong to; 0 when there are no generations
 * @param admit L4 network policy and binary-scoped policies
 * @param plan chain selection and the exchange's facts
 * @param l7 the L7 decision
 * @param requestChain the pre-credentials chain with its body-aware re-check
 * @param credentials credential injection and the post-credentials stages
 * @param audit audit events and metrics of what the proxy decided itself
 * @param sessions the message chain of a WebSocket upgrade
 * @param responseChain the response stages ({@code HTTP_RESPONSE/PRE_RETURN}) on the final response, after the
 *     credential scrub
 */
public record PolicySteps<P>(long generation, Admit admit, Plan<P> plan, L7<P> l7, RequestChain<P> requestChain,
                             Credentials<P> credentials, Audit<P> audit, Sessions<P> sessions,
                             ResponseChain<P> responseChain) {
    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a step is {@code null}
     */
    public PolicySteps {
        Objects.requireNonNull(admit, "admit");
        Objects.requireNonNull(plan, "plan");
        Objects.requireNonNull(l7, "l7");
        Objects.requireNonNull(requestChain, "requestChain");
        Objects.requireNonNull(credentials, "credentials");
        Objects.requireNonNull(audit, "audit");
        Objects.requireNonNull(sessions, "sessions");
        Objects.requireNonNull(responseChain, "responseChain");
    }

    /**
     * Steps without a WebSocket message chain (every upgrade's verdict is {@link SessionVerdict.None}) and without
     * response stages.
     *
     * @param generation the generation number
     * @param admit the L4 step
     * @param plan the plan step
     * @param l7 the L7 step
     * @param requestChain the request chain step
     * @param credentials the credential step
     * @param audit the audit step
     */
    public PolicySteps(long generation, Admit admit, Plan<P> plan, L7<P> l7, RequestChain<P> requestChain,
                       Credentials<P> credentials, Audit<P> audit) {
        this(generation, admit, plan, l7, requestChain, credentials, audit, (p, request, response) -> null);
    }

    /**
     * Steps without a WebSocket message chain (every upgrade's verdict is {@link SessionVerdict.None}).
     *
     * @param generation the generation number
     * @param admit the L4 step
     * @param plan the plan step
     * @param l7 the L7 step
     * @param requestChain the request chain step
     * @param credentials the credential step
     * @param audit the audit step
     * @param responseChain the response step
     */
    public PolicySteps(long generation, Admit admit, Plan<P> plan, L7<P> l7, RequestChain<P> requestChain,
                       Credentials<P> credentials, Audit<P> audit, ResponseChain<P> responseChain) {
        this(generation, admit, plan, l7, requestChain, credentials, audit, (p, r) -> new SessionVerdict.None(),
                responseChain);
    }

    /**
     * {@return steps that admit what {@code admit} admits and forward everything as received}: no chain, no L7 rule,
     * no credential, no audit (tests and tools)
     *
     * @param admit the L4 step
     */
    public static PolicySteps<Void> passThrough(Admit admit) {
        return new PolicySteps<>(0, admit, request -> new Planned<>(null, ChainSelection.none()),
                (plan, request, body) -> new L7Verdict.Unruled(),
                (plan, request, body) -> new RequestVerdict.Forward(request.headers(), body),
                (plan, request, out) -> new CredentialVerdict.Forward(out.headers(), out.rawQuery()),
                (plan, record) -> { });
    }

    /**
     * Step 1, admission: L4 network policy ({@code network_policies}: host and port), and for binary-scoped policies
     * the process behind the connection (RFC 0009, "Operation phases and placement": "Network / L4 policy" before
     * SSRF checks). The proxy calls it once per plain request and once per CONNECT (again for a request inside a
     * tunnel admitted under another generation), with the destination from the request-target or CONNECT authority
     * (never from a {@code Host} header), normalised: lowercase, no trailing dot, IPv4 dotted decimal, IPv6 in RFC
     * 5952 form without brackets. It must not block for long.
     */
    @FunctionalInterface
    public interface Admit {
        /**
         * @param host the normalised destination host
         * @param port the destination port, 1 to 65535
         * @param client the client connection (inside a tunnel: the tunnel's connection)
         * @return the verdict; never {@code null}. An exception is a denial (fail closed), logged.
         */
        AdmissionDecision admit(String host, int port, ClientConnection client);

        /**
         * Step 0, at the start of every request on a connection (each plain request, each request inside a tunnel),
         * before admission: checks that the process identity decided for the connection still holds and decides it
         * again when it does not ({@link ClientConnection#revalidate}; {@code docs/policy-reference.md}, "Binary
         * scoping"). Must be cheap: the default does nothing.
         *
         * @param host the normalised destination host
         * @param port the destination port
         * @param client the client connection
         * @return whether the identity was decided again (a tunnel's admission is then decided again)
         */
        default boolean revalidate(String host, int port, ClientConnection client) {
            return false;
        }
    }

    /**
     * Step 3 (after SSRF), the plan: the chain this generation selects for the admitted host (RFC 0009, "Host
     * selector"), the body it needs, and the step's own facts for the later steps. Before any body byte is read.
     *
     * @param <P> the plan type
     */
    @FunctionalInterface
    public interface Plan<P> {
        /**
         * @param request the admitted request head
         * @return the plan; never {@code null}
         */
        Planned<P> plan(ProxyRequest request);
    }

    /**
     * Step 4, L7 policy ({@code docs/policy-reference.md}, "L7 policy"; RFC 0009: "L7 policy (when protocol set)"
     * after admission, before the middleware chain): on the head (the canonical request-target, a denial, or the need
     * for the body), and again with the buffered body when the head's verdict was {@link L7Verdict.NeedsBody}.
     * Every decision is audited by the step. When a chain follows, the step may let the body through undecided
     * ({@link L7Verdict.Allow}) and leave the decision on it to {@link RequestChain}, which the pipeline calls next
     * with the same body: the decision and the re-checks of the bodies stages put in place are then one record.
     *
     * @param <P> the plan type
     */
    @FunctionalInterface
    public interface L7<P> {
        /**
         * @param plan the exchange's plan
         * @param request the request head
         * @param body empty on the head; the buffered body the second time
         * @return the verdict; never {@code null}
         */
        L7Verdict decide(P plan, ProxyRequest request, Optional<Body> body);
    }

    /**
     * Step 6, the pre-credentials middleware chain on the buffered body (RFC 0009, "Chain semantics"), with the
     * body-aware L7 re-check after every replacement (decision 7 of {@code docs/policy-reference.md}, "L7 policy"),
     * and the L7 decision on the body when {@link L7} left it to this step (a denial is a {@link RequestVerdict.Refuse}
     * with the L7 answer). Called only when the plan selected a chain or the L7 decision needed the body.
     *
     * @param <P> the plan type
     */
    @FunctionalInterface
    public interface RequestChain<P> {
        /**
         * @param plan the exchange's plan
         * @param request the request head as received
         * @param body the buffered body, at most the selection's cap; empty when the request has no body
         * @return forward or refuse; never {@code null}
         */
        RequestVerdict run(P plan, ProxyRequest request, Body body);
    }

    /**
     * Step 7, credentials (RFC 0009: "Credential injection", after the chain, before forwarding): placeholders
     * replaced by real secrets in header values and the query, then the restricted post-credentials stages (request
     * signing) with the body when it was buffered. When the returned headers equal the given ones and the query is
     * unchanged, the proxy forwards the original field lines byte for byte.
     *
     * @param <P> the plan type
     */
    @FunctionalInterface
    public interface Credentials<P> {
        /**
         * @param plan the exchange's plan
         * @param request the admitted request (its headers are the ones received, before the chain)
         * @param out what is about to be forwarded
         * @return forward (possibly with real credentials) or refuse; never {@code null}
         */
        CredentialVerdict inject(P plan, ProxyRequest request, Outgoing out);
    }

    /**
     * What is about to be forwarded, as the credential step receives it.
     *
     * @param headers the headers about to be forwarded, in order
     * @param fromChain whether {@code headers} are what the chain returned (already stripped of sandbox-supplied
     *     {@code x-openshell-middleware-*} fields) rather than the headers as received
     * @param rawQuery the raw query without {@code ?}, empty when there is none; never log it
     * @param body the buffered body about to be forwarded, or empty when it streams through unbuffered or there is
     *     none
     */
    public record Outgoing(List<HttpHeader> headers, boolean fromChain, String rawQuery, Optional<Body> body) {
        /** @throws NullPointerException if a part is {@code null} */
        public Outgoing {
            headers = List.copyOf(headers);
            Objects.requireNonNull(rawQuery, "rawQuery");
            Objects.requireNonNull(body, "body");
        }

        /** {@return counts only: the headers and the query may hold secrets} */
        @Override
        public String toString() {
            return "Outgoing[" + headers.size() + " headers, query " + rawQuery.length() + " chars]";
        }
    }

    /**
     * The audit of what the proxy decided by its own rules ({@link ExchangeRecord}): OCSF events and metrics. Every
     * event emitted for a connection is noted in its {@link AuditBarrier}. Must not block for long and must not
     * throw (an exception is logged and ignored).
     *
     * @param <P> the plan type
     */
    @FunctionalInterface
    public interface Audit<P> {
        /**
         * @param plan the exchange's plan, when the exchange was planned
         * @param record what happened
         */
        void record(Optional<P> plan, ExchangeRecord record);
    }

    /**
     * Step 5b, on a WebSocket upgrade request only: the session's message chain ({@code WEBSOCKET_MESSAGE};
     * {@code docs/external-middleware.md}, "WebSocket messages"). Selects the configs that join the session, runs
     * their preflight concurrently before the upstream is contacted, and audits a refusal.
     *
     * @param <P> the plan type
     */
    @FunctionalInterface
    public interface Sessions<P> {
        /**
         * @param plan the exchange's plan
         * @param request the upgrade request
         * @return none, refuse or inspect; never {@code null}
         */
        SessionVerdict open(P plan, ProxyRequest request);
    }

    /**
     * Step 9, the response stages (RFC 0009 {@code HTTP_RESPONSE/PRE_RETURN}; NVIDIA/OpenShell
     * {@code HttpResponsePreReturn}): on the final non-{@code 1xx} response of an exchange (never a {@code 101}),
     * after the credential scrub, before any byte of it reaches the client. Every preflight runs here; the body
     * stages run through the returned {@link ResponseBody}.
     *
     * @param <P> the plan type
     */
    @FunctionalInterface
    public interface ResponseChain<P> {
        /**
         * @param plan the exchange's plan
         * @param request the request
         * @param response the final response head
         * @return {@code null} when no response stage applies to this exchange (the response is relayed as it
         *     would be without response stages); else deliver or withhold
         */
        ResponseVerdict open(P plan, ProxyRequest request, ProxyResponse response);

        /**
         * Whether interim {@code 1xx} heads (other than {@code 100}, which the proxy answers itself, and a
         * {@code 101}) of this exchange are withheld from the client: the contract never evaluates an interim head, so
         * a selected {@code fail_closed} response stage could not have inspected it, and fail_closed never forwards
         * what it could not inspect. A withheld head is dropped (the final response still goes through the stages)
         * and recorded once per exchange ({@link ExchangeRecord.InterimWithheld}).
         *
         * @param plan the exchange's plan
         * @param request the request
         * @return {@code true} when a {@code fail_closed} response stage is selected for the exchange; the default,
         *     {@code false}, relays interim heads (scrubbed of credentials like the final head)
         */
        default boolean withholdsInterim(P plan, ProxyRequest request) {
            return false;
        }
    }
}
