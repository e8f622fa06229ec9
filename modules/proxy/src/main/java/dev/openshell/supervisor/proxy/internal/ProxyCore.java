package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.AuditBarrier;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRefusal;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Everything the connections of one proxy share: the current policy steps, the audit log's wait, the SSRF guard, TLS
 * interception, the upstream pool, the body budget, limits, timeouts and the deadline watchdog.
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

    private final Supplier<? extends PolicySteps<?>> policy;
    private final AuditBarrier.Log auditLog;
    private final SsrfGuard ssrf;
    private final InterceptionTls interception;
    private final UpstreamPool pool;
    private final Timeouts timeouts;
    private final BodyBudget bodyBudget;
    private final Limits limits;
    private final ConnectionLimits connections;
    private final Admission admission;
    private final ScheduledThreadPoolExecutor watchdog = ReadDeadline.watchdog();
    private final String idPrefix = HexFormat.of().formatHex(new SecureRandom().generateSeed(4));
    private final AtomicLong ids = new AtomicLong();
    /** The masking keys of the frames the supervisor writes toward an upstream WebSocket server, one source for all. */
    private final SecureRandom maskKeys = new SecureRandom();

    /**
     * @param policy the current policy steps, read once per exchange
     * @param auditLog the audit log's wait, behind every connection's {@link AuditBarrier}
     * @param ssrf the SSRF guard
     * @param interception TLS interception
     * @param pool upstream connections
     * @param timeouts the timeouts
     * @param bodyBudget the bytes of request bodies that may be held for middleware at once
     * @param limits connection caps and the request head deadline
     */
    public ProxyCore(Supplier<? extends PolicySteps<?>> policy, AuditBarrier.Log auditLog, SsrfGuard ssrf,
                     InterceptionTls interception, UpstreamPool pool, Timeouts timeouts, BodyBudget bodyBudget,
                     Limits limits) {
        this(policy, auditLog, ssrf, interception, pool, timeouts, bodyBudget, limits, Admission.DEFAULT);
    }

    /**
     * Admission control beyond the connection caps of {@link Limits}.
     *
     * @param work the bound on middleware evaluations at once, with its queue
     * @param maxConnectionsPerProcess connections one process may hold beyond its address's cap
     *     ({@link ConnectionLimits}); 0 for none
     * @param owner finds the process (its PID) holding a connection's client end; empty when not found. Called, and
     *     may block on {@code /proc}, only for a connection over its address's cap
     */
    public record Admission(WorkAdmission work, int maxConnectionsPerProcess,
                            java.util.function.Function<ClientConnection, java.util.OptionalLong> owner) {
        /** OpenShell's work bound, no connection beyond an address's cap. */
        public static final Admission DEFAULT = new Admission(new WorkAdmission(WorkAdmission.DEFAULT_RUNNING,
                WorkAdmission.DEFAULT_QUEUED), 0, c -> java.util.OptionalLong.empty());

        /** @throws NullPointerException if a part is {@code null} */
        public Admission {
            Objects.requireNonNull(work, "work");
            Objects.requireNonNull(owner, "owner");
        }
    }

    /**
     * @param policy the current policy steps, read once per exchange
     * @param auditLog the audit log's wait, behind every connection's {@link AuditBarrier}
     * @param ssrf the SSRF guard
     * @param interception TLS interception
     * @param pool upstream connections
     * @param timeouts the timeouts
     * @param bodyBudget the bytes of request bodies that may be held for middleware at once
     * @param limits connection caps and the request head deadline
     * @param admission the work bound and the per-process connections beyond an address's cap
     */
    public ProxyCore(Supplier<? extends PolicySteps<?>> policy, AuditBarrier.Log auditLog, SsrfGuard ssrf,
                     InterceptionTls interception, UpstreamPool pool, Timeouts timeouts, BodyBudget bodyBudget,
                     Limits limits, Admission admission) {
        this.admission = Objects.requireNonNull(admission);
        this.policy = Objects.requireNonNull(policy);
        this.auditLog = Objects.requireNonNull(auditLog);
        this.limits = Objects.requireNonNull(limits);
        this.connections = new ConnectionLimits(limits.maxConnections(), limits.maxConnectionsPerClient(),
                admission.maxConnectionsPerProcess());
        this.bodyBudget = Objects.requireNonNull(bodyBudget);
        this.ssrf = Objects.requireNonNull(ssrf);
        this.interception = Objects.requireNonNull(interception);
        this.pool = Objects.requireNonNull(pool);
        this.timeouts = Objects.requireNonNull(timeouts);
    }

    /** {@return the current policy steps: read once per exchange, which they then serve whole} */
    PolicySteps<?> policy() {
        return Objects.requireNonNull(policy.get(), "policy steps");
    }

    /** {@return a new connection's barrier over the audit log} */
    AuditBarrier newAuditBarrier() {
        return new AuditBarrier(auditLog);
    }

    /** {@return the watchdog of read deadlines} */
    ScheduledThreadPoolExecutor watchdog() {
        return watchdog;
    }

    /** Stops the watchdog (the proxy stopped). */
    public void close() {
        watchdog.shutdownNow();
    }

    Limits limits() {
        return limits;
    }

    /** {@return the caps on open client connections, and their counts} */
    public ConnectionLimits connections() {
        return connections;
    }

    /**
     * The one place the proxy reports a refusal: hands it to the current audit step ({@link PolicySteps.Audit},
     * {@link dev.openshell.supervisor.proxy.ExchangeRecord.Refused}). Call it exactly once per refusal, where the
     * answer is decided; a {@link Refusal} thrown after reporting is marked {@link Refusal#reported()}. Never throws.
     *
     * @param r the refusal
     */
    void report(ProxyRefusal r) {
        Pipeline.refused(policy(), r);
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
        report(policy(), r, client, method, target, requestId);
    }

    /** Reports a {@link Refusal} to the audit step of {@code steps} unless it was reported already, and marks it. */
    static void report(PolicySteps<?> steps, Refusal r, ClientConnection client, Optional<String> method,
                       Optional<ProxyRefusal.Destination> target, Optional<String> requestId) {
        if (!r.isReported()) {
            r.reported();
            Pipeline.refused(steps, new ProxyRefusal(r.kind(), r.status(), r.error(), r.cause(), r.detail(), client,
                    method, target, requestId));
        }
    }

    BodyBudget bodyBudget() {
        return bodyBudget;
    }

    WorkAdmission work() {
        return admission.work();
    }

    /** {@return the PID of the process holding {@code c}'s client end, when found (may block)} @param c a connection */
    java.util.OptionalLong owner(ClientConnection c) {
        try {
            return admission.owner().apply(c);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "connection owner lookup failed: " + e.getClass().getName());
            return java.util.OptionalLong.empty();
        }
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

    /** {@return where the masking keys of frames toward an upstream WebSocket server come from} */
    SecureRandom maskKeys() {
        return maskKeys;
    }

    String nextRequestId() {
        return idPrefix + "-" + ids.incrementAndGet();
    }

    /**
     * {@return the checked addresses of an admitted destination: connect only to these}
     *
     * @param authority the destination
     * @param endpoint the endpoint that admitted it ({@code allowed_ips})
     * @throws Refusal 403 {@code ssrf_blocked}, or 502 {@code unresolvable_host}
     */
    List<InetAddress> ssrf(Authority authority, EndpointFacts endpoint) throws Refusal {
        SsrfGuard.Verdict v = ssrf.check(authority, endpoint);
        if (v instanceof SsrfGuard.Verdict.Refused r) {
            throw new Refusal(r.error().equals("ssrf_blocked") ? 403 : 502, r.error(), r.detail());
        }
        return ((SsrfGuard.Verdict.Admitted) v).addresses();
    }
}
