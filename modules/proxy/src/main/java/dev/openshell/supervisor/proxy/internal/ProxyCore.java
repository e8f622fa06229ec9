package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.CredentialInjection;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.HookResult;
import dev.openshell.supervisor.proxy.NetworkAdmission;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.RequestHook;
import dev.openshell.supervisor.proxy.RequestPlan;
import dev.openshell.supervisor.proxy.Uninspectable;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Everything the connections of one proxy share: the admission, hook and credential interfaces, the SSRF guard, TLS
 * interception, the upstream pool and timeouts.
 */
public final class ProxyCore {
    static final System.Logger LOG = System.getLogger("dev.openshell.supervisor.proxy");

    /**
     * A destination past L4 and SSRF admission.
     *
     * @param authority the normalised destination
     * @param endpoint the matching endpoint
     * @param addresses the checked addresses: connect only to these
     * @param generation the policy generation that admitted it ({@link AdmissionDecision.Allowed#generation()})
     */
    record Admitted(Authority authority, EndpointFacts endpoint, List<InetAddress> addresses, long generation) {
    }

    /**
     * The timeouts.
     *
     * @param connect TCP connect and upstream TLS handshake
     * @param upstreamRead longest wait for an upstream byte, also the idle limit of tunnels and WebSocket relays
     * @param poolIdle how long an idle upstream connection is kept for idempotent, replayable requests
     * @param freshIdle the longest idle time of a pooled connection reused for a request that cannot be retried
     */
    public record Timeouts(Duration connect, Duration upstreamRead, Duration poolIdle, Duration freshIdle) {
    }

    /**
     * Limits on what clients may hold, so that unfinished or trickled requests cannot exhaust memory.
     *
     * @param maxConnections the most client connections open at once over all clients
     * @param maxConnectionsPerClient the most open at once from one client address
     * @param requestHeadTimeout the deadline for a whole request head, from its first byte
     * @param bodyBufferTimeout the deadline for a whole body buffered for the chain, from the start of its read
     * @param bodyMinBytesPerSecond the least average rate of a request body (buffered or streamed) after its first
     *     {@code bodyMinRateGrace}, in bytes per second; 0 for none
     * @param bodyMinRateGrace how long a body may take before its average rate is checked; positive
     */
    public record Limits(int maxConnections, int maxConnectionsPerClient, Duration requestHeadTimeout,
                         Duration bodyBufferTimeout, long bodyMinBytesPerSecond, Duration bodyMinRateGrace) {
        /** The default minimum body data rate, in bytes per second. */
        public static final long DEFAULT_BODY_MIN_BYTES_PER_SECOND = 1024;
        /** The default time before a body's rate is checked. */
        public static final Duration DEFAULT_BODY_MIN_RATE_GRACE = Duration.ofSeconds(5);
        /**
         * The defaults: 2048 connections, 512 per client address, 30 s per request head, 60 s per buffered body,
         * 1024 bytes per second of body after its first 5 s.
         */
        public static final Limits DEFAULT = new Limits(2048, 512, Duration.ofSeconds(30), Duration.ofSeconds(60),
                DEFAULT_BODY_MIN_BYTES_PER_SECOND, DEFAULT_BODY_MIN_RATE_GRACE);

        /**
         * Limits with the default minimum body data rate.
         *
         * @param maxConnections the most client connections open at once over all clients
         * @param maxConnectionsPerClient the most open at once from one client address
         * @param requestHeadTimeout the deadline for a whole request head
         * @param bodyBufferTimeout the deadline for a whole body buffered for the chain
         */
        public Limits(int maxConnections, int maxConnectionsPerClient, Duration requestHeadTimeout,
                      Duration bodyBufferTimeout) {
            this(maxConnections, maxConnectionsPerClient, requestHeadTimeout, bodyBufferTimeout,
                    DEFAULT_BODY_MIN_BYTES_PER_SECOND, DEFAULT_BODY_MIN_RATE_GRACE);
        }

        /** @throws IllegalArgumentException when a cap is below 1, above the total, or a timeout not positive */
        public Limits {
            if (maxConnections < 1 || maxConnectionsPerClient < 1 || maxConnectionsPerClient > maxConnections) {
                throw new IllegalArgumentException("connection limits " + maxConnections + " total, "
                        + maxConnectionsPerClient + " per client are out of range (1 <= per client <= total)");
            }
            if (requestHeadTimeout.isNegative() || requestHeadTimeout.isZero() || bodyBufferTimeout.isNegative()
                    || bodyBufferTimeout.isZero()) {
                throw new IllegalArgumentException("the request head and body buffer timeouts must be positive");
            }
            if (bodyMinBytesPerSecond < 0 || bodyMinRateGrace.isNegative() || bodyMinRateGrace.isZero()) {
                throw new IllegalArgumentException("the minimum body data rate must not be negative and its grace"
                        + " period must be positive");
            }
        }
    }

    private final NetworkAdmission admission;
    private final RequestHook hook;
    private final CredentialInjection credentials;
    private final SsrfGuard ssrf;
    private final InterceptionTls interception;
    private final UpstreamPool pool;
    private final Timeouts timeouts;
    private final BodyBudget bodyBudget;
    private final Limits limits;
    private final ConnectionLimits connections;
    private final String idPrefix = HexFormat.of().formatHex(new SecureRandom().generateSeed(4));
    private final AtomicLong ids = new AtomicLong();

    /**
     * @param admission L4 network policy
     * @param hook the middleware hook
     * @param credentials the credential step
     * @param ssrf the SSRF guard
     * @param interception TLS interception
     * @param pool upstream connections
     * @param timeouts the timeouts
     */
    public ProxyCore(NetworkAdmission admission, RequestHook hook, CredentialInjection credentials, SsrfGuard ssrf,
                     InterceptionTls interception, UpstreamPool pool, Timeouts timeouts) {
        this(admission, hook, credentials, ssrf, interception, pool, timeouts,
                new BodyBudget(Integer.MAX_VALUE, Duration.ZERO));
    }

    /**
     * @param admission L4 network policy
     * @param hook the middleware hook
     * @param credentials the credential step
     * @param ssrf the SSRF guard
     * @param interception TLS interception
     * @param pool upstream connections
     * @param timeouts the timeouts
     * @param bodyBudget the bytes of request bodies that may be held for middleware at once
     */
    public ProxyCore(NetworkAdmission admission, RequestHook hook, CredentialInjection credentials, SsrfGuard ssrf,
                     InterceptionTls interception, UpstreamPool pool, Timeouts timeouts, BodyBudget bodyBudget) {
        this(admission, hook, credentials, ssrf, interception, pool, timeouts, bodyBudget, Limits.DEFAULT);
    }

    /**
     * @param admission L4 network policy
     * @param hook the middleware hook
     * @param credentials the credential step
     * @param ssrf the SSRF guard
     * @param interception TLS interception
     * @param pool upstream connections
     * @param timeouts the timeouts
     * @param bodyBudget the bytes of request bodies that may be held for middleware at once
     * @param limits connection caps and the request head deadline
     */
    public ProxyCore(NetworkAdmission admission, RequestHook hook, CredentialInjection credentials, SsrfGuard ssrf,
                     InterceptionTls interception, UpstreamPool pool, Timeouts timeouts, BodyBudget bodyBudget,
                     Limits limits) {
        this.limits = Objects.requireNonNull(limits);
        this.connections = new ConnectionLimits(limits.maxConnections(), limits.maxConnectionsPerClient());
        this.bodyBudget = Objects.requireNonNull(bodyBudget);
        this.admission = Objects.requireNonNull(admission);
        this.hook = Objects.requireNonNull(hook);
        this.credentials = Objects.requireNonNull(credentials);
        this.ssrf = Objects.requireNonNull(ssrf);
        this.interception = Objects.requireNonNull(interception);
        this.pool = Objects.requireNonNull(pool);
        this.timeouts = Objects.requireNonNull(timeouts);
    }

    Limits limits() {
        return limits;
    }

    ConnectionLimits connections() {
        return connections;
    }

    /**
     * The one place the proxy reports a refusal: counts it ({@link RequestHook#admissionRefused} for
     * {@code NETWORK_POLICY} and {@code SSRF}, {@link RequestHook#limitRefused} for {@code LIMIT}) and hands it to
     * {@link RequestHook#refused}, where the runtime audits it. Call it exactly once per refusal, where the answer is
     * decided; a {@link Refusal} thrown after reporting is marked {@link Refusal#reported()}. Never throws.
     *
     * @param r the refusal
     */
    void report(ProxyRefusal r) {
        try {
            switch (r.kind()) {
                case NETWORK_POLICY, SSRF -> hook.admissionRefused(r.code());
                case LIMIT -> hook.limitRefused(r.code());
                default -> {
                }
            }
            hook.refused(r);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "refusal report failed: " + e.getClass().getName());
        }
    }

    /**
     * Reports a refusal ({@link #report(ProxyRefusal)}) from its parts.
     *
     * @param kind the rule that refused it
     * @param status the status the client got, 0 for an unanswered close
     * @param code the platform code
     * @param cause a finer code, when there is one
     * @param detail the proxy-owned detail
     * @param client the connection
     * @param method the method, when the head was read
     * @param destination the destination, when the request target was read and checked
     * @param requestId the request ID, when one was assigned
     */
    void report(ProxyRefusal.Kind kind, int status, String code, Optional<String> cause, String detail,
                ClientConnection client, Optional<String> method, Optional<ProxyRefusal.Destination> destination,
                Optional<String> requestId) {
        report(new ProxyRefusal(kind, status, code, cause, detail, client, method, destination, requestId));
    }

    /** {@return a request target's destination for a report} @param t the checked target */
    static ProxyRefusal.Destination destination(RequestReader.Target t) {
        return destination(t.scheme(), t.authority());
    }

    /** {@return a destination for a report} @param scheme the scheme @param a the checked authority */
    static ProxyRefusal.Destination destination(String scheme, Authority a) {
        return new ProxyRefusal.Destination(scheme, a.host(), a.port());
    }

    /** Reports a {@link Refusal} unless it was reported already, and marks it reported. */
    void report(Refusal r, ClientConnection client, Optional<String> method,
                Optional<ProxyRefusal.Destination> target, Optional<String> requestId) {
        if (!r.isReported()) {
            r.reported();
            report(r.kind(), r.status(), r.error(), r.cause(), r.detail(), client, method, target, requestId);
        }
    }

    /** Reports how long a request waited for body buffer room ({@link RequestHook#bodyBufferWaited}); never throws. */
    void bodyBufferWaited(long nanos) {
        try {
            hook.bodyBufferWaited(nanos);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "body buffer wait report failed: " + e.getClass().getName());
        }
    }

    /**
     * Before a write to a client socket or its close: the hook's wait for the calling thread's audit lines (never
     * throws).
     */
    void beforeClientOutput() {
        try {
            hook.beforeClientOutput();
        } catch (RuntimeException e) {
            // the write goes on; a wait that failed must not fail the response
        }
    }

    BodyBudget bodyBudget() {
        return bodyBudget;
    }

    InterceptionTls interception() {
        return interception;
    }

    UpstreamPool pool() {
        return pool;
    }

    Timeouts timeouts() {
        return timeouts;
    }

    String nextRequestId() {
        return idPrefix + "-" + ids.incrementAndGet();
    }

    /**
     * L4 network policy for the connection's process, then SSRF (RFC 0009 order). A refusal is reported here
     * ({@link #report}) and thrown marked reported.
     *
     * @param authority the destination
     * @param client the connection
     * @param method the request's method ({@code CONNECT} for a tunnel)
     * @param scheme the request's scheme ({@code http} for a tunnel)
     */
    Admitted admit(Authority authority, ClientConnection client, String method, String scheme) throws Refusal {
        try {
            return admit(authority, client);
        } catch (Refusal r) {
            report(r, client, Optional.of(method), Optional.of(destination(scheme, authority)), Optional.empty());
            throw r;
        }
    }

    private Admitted admit(Authority authority, ClientConnection client) throws Refusal {
        AdmissionDecision d;
        try {
            d = admission.admit(authority.host(), authority.port(), client);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "network policy evaluation failed: " + e.getClass().getName());
            d = null;
        }
        if (d == null) {
            throw new Refusal(403, "policy_denied", "network policy could not be evaluated");
        }
        if (d instanceof AdmissionDecision.Denied denied) {
            throw new Refusal(403, "policy_denied", denied.reason());
        }
        AdmissionDecision.Allowed allowed = (AdmissionDecision.Allowed) d;
        EndpointFacts endpoint = allowed.endpoint();
        SsrfGuard.Verdict v = ssrf.check(authority, endpoint);
        if (v instanceof SsrfGuard.Verdict.Refused r) {
            throw new Refusal(r.error().equals("ssrf_blocked") ? 403 : 502, r.error(), r.detail());
        }
        return new Admitted(authority, endpoint, ((SsrfGuard.Verdict.Admitted) v).addresses(), allowed.generation());
    }

    RequestPlan plan(ProxyRequest request) throws Refusal {
        try {
            RequestPlan plan = Objects.requireNonNull(hook.plan(request), "plan");
            Objects.requireNonNull(plan.admission(), "admission");
            Objects.requireNonNull(plan.selection(), "selection");
            return plan;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": chain selection failed: "
                    + e.getClass().getName());
            throw new Refusal(500, "internal_error", "middleware selection failed");
        }
    }

    HookResult evaluate(RequestPlan plan, ProxyRequest request, Body body) throws Refusal {
        try {
            return Objects.requireNonNull(hook.evaluate(plan, request, body), "result");
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": middleware hook failed: "
                    + e.getClass().getName());
            throw new Refusal(500, "internal_error", "middleware evaluation failed");
        }
    }

    void answeredLocally(RequestPlan plan, ProxyRequest request, int status, String code) {
        try {
            hook.answeredLocally(plan, request, status, code);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": local-answer report failed: "
                    + e.getClass().getName());
        }
    }

    void uninspectable(RequestPlan plan, ProxyRequest request, Uninspectable what) {
        try {
            hook.uninspectable(plan, request, what);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": uninspectable report failed: "
                    + e.getClass().getName());
        }
    }

    void responseScrubbed(ResponseScrub scrub, java.util.Set<String> credentials, long headerMatches,
                          long bodyMatches) {
        try {
            hook.responseScrubbed(scrub.plan(), scrub.request(), credentials, headerMatches, bodyMatches);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + scrub.request().requestId()
                    + ": response scrub report failed: " + e.getClass().getName());
        }
    }

    void responseUninspectable(ResponseScrub scrub, String code, boolean relayed) {
        try {
            hook.responseUninspectable(scrub.plan(), scrub.request(), code, relayed);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + scrub.request().requestId()
                    + ": uninspectable response report failed: " + e.getClass().getName());
        }
    }

    CredentialInjection.Outcome.Forward inject(RequestPlan plan, ProxyRequest request, List<HttpHeader> headers,
                                               String rawQuery, java.util.Optional<Body> body) throws Refusal {
        CredentialInjection.Outcome outcome;
        try {
            outcome = Objects.requireNonNull(credentials.inject(plan, request, headers, rawQuery, body), "outcome");
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "request " + request.requestId() + ": credential injection failed: "
                    + e.getClass().getName());
            throw new Refusal(502, "credential_injection_failed", "credential injection failed");
        }
        if (outcome instanceof CredentialInjection.Outcome.Refuse r) {
            // the hook's own refusal: it reports it (with the operator's detail, which the client does not get)
            throw new Refusal(r.status(), r.error(), r.detail()).reported();
        }
        return (CredentialInjection.Outcome.Forward) outcome;
    }
}
