package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.supervisor.proxy.internal.BodyBudget;
import dev.openshell.supervisor.proxy.internal.CertificateAuthority;
import dev.openshell.supervisor.proxy.internal.ConnectionLimits;
import dev.openshell.supervisor.proxy.internal.InterceptionTls;
import dev.openshell.supervisor.proxy.internal.ProxyConnectionSelector;
import dev.openshell.supervisor.proxy.internal.ProxyCore;
import dev.openshell.supervisor.proxy.internal.SsrfGuard;
import dev.openshell.supervisor.proxy.internal.UpstreamPool;
import dev.openshell.supervisor.proxy.internal.UpstreamTls;
import dev.openshell.supervisor.proxy.internal.WorkAdmission;
import io.helidon.common.socket.SocketOptions;
import io.helidon.webserver.WebServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * The egress supervisor proxy: an HTTP/1.1 forward proxy on Helidon WebServer (one virtual thread per connection)
 * that admits, inspects and forwards agent traffic (RFC 0009, "Operation phases and placement").
 *
 * <p>It serves absolute-form {@code http://} requests ({@code curl -x}, {@code HTTP_PROXY}) and {@code CONNECT
 * host:port} ({@code HTTPS_PROXY}); CONNECT tunnels are TLS-intercepted with leaf certificates from the supervisor CA
 * unless the endpoint is {@code tls: skip}. Every request goes through the steps of one exchange: L4 admission,
 * SSRF checks, L7 policy, the middleware chain and the credential step ({@link PolicySteps}, bound by the runtime per
 * policy generation) before it is forwarded. See {@code docs/proxy.md} for the full request flow and the framing rules.
 *
 * <pre>{@code
 * SupervisorProxy proxy = SupervisorProxy.builder()
 *         .stateDirectory(Path.of("/var/lib/openshell"))
 *         .admission((host, port, client) -> AdmissionDecision.allow(EndpointFacts.of("default")))
 *         .build();
 * int port = proxy.start();
 * ...
 * proxy.stop();
 * }</pre>
 *
 * <p>Thread-safe. {@link #start()} and {@link #stop()} may each be called once.
 */
public final class SupervisorProxy implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("dev.openshell.supervisor.proxy");
    /** The default listen address, {@code 127.0.0.1:3128}. */
    public static final InetSocketAddress DEFAULT_LISTEN = new InetSocketAddress("127.0.0.1", 3128);

    private final Builder b;
    private volatile WebServer server;
    private volatile UpstreamPool pool;
    private volatile CertificateAuthority ca;
    private volatile ProxyCore core;

    private SupervisorProxy(Builder b) {
        this.b = b;
    }

    /** {@return a new builder} */
    public static Builder builder() {
        return new Builder();
    }

    private static final java.util.concurrent.atomic.AtomicBoolean PREPARED =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * Starts, on a daemon thread of its own, the part of a proxy's start-up that depends on no setting: reading the
     * system trust store, loading the charset names a body may declare ({@code BodyCharsets.prepare}) and discovering
     * Helidon's services. {@code supervisor run} calls it before it parses its command line, so that this work runs
     * beside that and beside the policy's compilation, on the other core;
     * {@link #start()} waits for what is still running and does what was not started. Optional, idempotent, and
     * never throws: {@link #start()} reports a failure.
     */
    public static void prepare() {
        if (!PREPARED.compareAndSet(false, true)) {
            return;
        }
        Thread.ofPlatform().daemon(true).name("proxy-prepare").start(() -> {
            UpstreamTls.preload();
            dev.openshell.middleware.spi.internal.BodyCharsets.prepare();
            try {
                io.helidon.service.registry.GlobalServiceRegistry.registry();
            } catch (RuntimeException | java.util.ServiceConfigurationError | LinkageError e) {
                // WebServer's own start discovers the services again, and reports what fails
            }
        });
    }

    /**
     * Loads or creates the CA, then binds the listener and starts serving. Logs a warning for each loosened
     * {@link NetworkSettings} value.
     *
     * @return the bound port (useful with port 0)
     * @throws ProxyException when the CA or a trust file cannot be loaded, or the address cannot be bound
     * @throws IllegalStateException when already started
     */
    public synchronized int start() {
        if (server != null) {
            throw new IllegalStateException("the proxy is already started");
        }
        try {
            ca = b.operatorCaCert != null ? CertificateAuthority.load(b.operatorCaCert, b.operatorCaKey)
                    : CertificateAuthority.loadOrCreate(b.stateDirectory);
        } catch (IOException e) {
            throw new ProxyException("cannot load the supervisor CA: " + e.getMessage(), e);
        }
        UpstreamTls upstreamTls;
        try {
            upstreamTls = UpstreamTls.create(Optional.ofNullable(b.upstreamExtraCa));
        } catch (IOException e) {
            throw new ProxyException("cannot load upstream trust: " + e.getMessage(), e);
        }
        if (b.network.allowLoopbackUpstreams()) {
            LOG.log(System.Logger.Level.WARNING, "allow_loopback_upstreams is on: loopback destinations are admitted"
                    + " (tests and local development only)");
        }
        if (!b.network.staticHosts().isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "static_hosts overrides DNS for " + b.network.staticHosts().keySet()
                    + " (tests and local development only)");
        }
        pool = new UpstreamPool(upstreamTls, b.connectTimeout, b.upstreamReadTimeout, b.upstreamIdleTimeout);
        ProxyCore core = new ProxyCore(b.policy, b.auditLog, SsrfGuard.system(b.network), new InterceptionTls(ca), pool,
                new ProxyCore.Timeouts(b.connectTimeout, b.upstreamReadTimeout, b.upstreamIdleTimeout,
                        Duration.ofSeconds(1)),
                new BodyBudget(b.bodyBufferBudget, b.bodyBufferWait, b.bodyBufferClientSharePercent),
                new ProxyCore.Limits(b.maxConnections, Math.min(b.maxConnectionsPerClient, b.maxConnections),
                        b.requestHeadTimeout, b.bodyBufferTimeout, b.bodyMinBytesPerSecond, b.bodyMinRateGrace),
                new ProxyCore.Admission(new WorkAdmission(b.maxMiddlewareWork, b.maxQueuedMiddlewareWork),
                        b.maxConnectionsPerProcess, b.connectionOwner));
        this.core = core;
        WebServer ws = WebServer.builder()
                .host(b.listen.getHostString()).port(b.listen.getPort()).shutdownHook(false)
                .shutdownGracePeriod(b.stopGracePeriod).idleConnectionTimeout(b.clientIdleTimeout)
                .idleConnectionPeriod(b.clientIdleTimeout.dividedBy(2).compareTo(Duration.ofSeconds(30)) < 0
                        ? b.clientIdleTimeout.dividedBy(2) : Duration.ofSeconds(30))
                .connectionOptions(SocketOptions.builder().tcpNoDelay(true).build())
                // the proxy's selector only: with Helidon's HTTP/1 and HTTP/2 providers beside it, the listener waits
                // for a first byte to choose, so a connection that never sends one escaped the connection caps
                .protocolsDiscoverServices(false)
                .addConnectionSelector(new ProxyConnectionSelector(core))
                .build();
        ws.start();
        if (!ws.isRunning() || ws.port() <= 0) {
            ws.stop();
            pool.close();
            core.close();
            throw new ProxyException(ListenFailure.describe("the proxy", b.listen));
        }
        server = ws;
        return ws.port();
    }

    /** {@return the bound port, or -1 when not running} */
    public int port() {
        WebServer s = server;
        return s == null || !s.isRunning() ? -1 : s.port();
    }

    /** {@return the connections the caps count open now (one the client closed until it is read to its end)} */
    int openConnections() {
        ProxyCore c = core;
        return c == null ? 0 : c.connections().open();
    }

    /** {@return the CA certificate clients must trust; available after {@link #start()}} */
    public X509Certificate caCertificate() {
        if (ca == null) {
            throw new IllegalStateException("the proxy is not started");
        }
        return ca.certificate();
    }

    /** {@return the CA certificate as PEM text; available after {@link #start()}} */
    public String caCertificatePem() {
        if (ca == null) {
            throw new IllegalStateException("the proxy is not started");
        }
        return ca.certificatePem();
    }

    /**
     * Stops accepting connections, lets in-flight requests finish for at most the stop grace period, then closes
     * what is left, and closes pooled upstream connections. Idempotent.
     */
    public synchronized void stop() {
        WebServer s = server;
        if (s != null) {
            s.stop();
        }
        if (pool != null) {
            pool.close();
        }
        if (core != null) {
            core.close();
        }
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close() {
        stop();
    }

    /** Builds a {@link SupervisorProxy}. Not thread-safe. */
    public static final class Builder {
        private InetSocketAddress listen = DEFAULT_LISTEN;
        private Path stateDirectory;
        private Path operatorCaCert;
        private Path operatorCaKey;
        private Path upstreamExtraCa;
        private java.util.function.Supplier<? extends PolicySteps<?>> policy;
        private AuditBarrier.Log auditLog = sequence -> true;
        private NetworkSettings network = NetworkSettings.defaults();
        private Duration connectTimeout = Duration.ofSeconds(10);
        private Duration upstreamReadTimeout = Duration.ofMinutes(5);
        private Duration upstreamIdleTimeout = Duration.ofSeconds(4);
        private Duration clientIdleTimeout = Duration.ofMinutes(2);
        private Duration stopGracePeriod = Duration.ofSeconds(10);
        private long bodyBufferBudget = defaultBodyBufferBudget();
        private Duration bodyBufferWait = Duration.ofSeconds(10);
        private int maxConnections = ProxyCore.Limits.DEFAULT.maxConnections();
        private int maxConnectionsPerClient = ProxyCore.Limits.DEFAULT.maxConnectionsPerClient();
        private Duration requestHeadTimeout = ProxyCore.Limits.DEFAULT.requestHeadTimeout();
        private Duration bodyBufferTimeout = ProxyCore.Limits.DEFAULT.bodyBufferTimeout();
        private long bodyMinBytesPerSecond = ProxyCore.Limits.DEFAULT.bodyMinBytesPerSecond();
        private Duration bodyMinRateGrace = ProxyCore.Limits.DEFAULT.bodyMinRateGrace();
        private int bodyBufferClientSharePercent = BodyBudget.DEFAULT_CLIENT_SHARE_PERCENT;
        private int maxMiddlewareWork = WorkAdmission.DEFAULT_RUNNING;
        private int maxQueuedMiddlewareWork = WorkAdmission.DEFAULT_QUEUED;
        private int maxConnectionsPerProcess = ConnectionLimits.DEFAULT_MAX_PER_PROCESS;
        private java.util.function.Function<ClientConnection, java.util.OptionalLong> connectionOwner =
                c -> java.util.OptionalLong.empty();

        private Builder() {
        }

        /** {@return this} @param address the listen address; default {@code 127.0.0.1:3128}; port 0 picks one */
        public Builder listen(InetSocketAddress address) {
            this.listen = Objects.requireNonNull(address, "address");
            return this;
        }

        /**
         * {@return this}
         *
         * @param dir the state directory: the generated CA lives in {@code <dir>/ca/supervisor-ca.pem} and
         *     {@code supervisor-ca-key.pem} (mode 0600); created on first start
         */
        public Builder stateDirectory(Path dir) {
            this.stateDirectory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * Uses an operator-supplied CA instead of the generated one.
         *
         * @param certPem PEM file with the CA certificate (CA:true)
         * @param keyPem PEM file with its unencrypted private key (EC, RSA or Ed25519)
         * @return this
         */
        public Builder operatorCa(Path certPem, Path keyPem) {
            this.operatorCaCert = Objects.requireNonNull(certPem, "certPem");
            this.operatorCaKey = Objects.requireNonNull(keyPem, "keyPem");
            return this;
        }

        /**
         * {@return this}
         *
         * @param pem a PEM file of extra CA certificates trusted for upstream TLS, besides the
         * system trust store
         */
        public Builder upstreamTrust(Path pem) {
            this.upstreamExtraCa = Objects.requireNonNull(pem, "pem");
            return this;
        }

        /**
         * {@return this}
         *
         * @param policy the policy steps of the current generation, read once per exchange ({@link PolicySteps});
         *     this or {@link #admission} is required
         */
        public Builder policy(java.util.function.Supplier<? extends PolicySteps<?>> policy) {
            this.policy = Objects.requireNonNull(policy, "policy");
            return this;
        }

        /**
         * Serves with steps that admit what {@code admit} admits and forward everything else as received
         * ({@link PolicySteps#passThrough}): no chain, no L7 rule, no credential, no audit. For tools and tests.
         *
         * @param admit the L4 network policy check
         * @return this
         */
        public Builder admission(PolicySteps.Admit admit) {
            PolicySteps<Void> steps = PolicySteps.passThrough(admit);
            return policy(() -> steps);
        }

        /**
         * {@return this}
         *
         * @param auditLog the audit log's wait behind every connection's {@link AuditBarrier}; default: nothing to
         *     wait for
         */
        public Builder auditLog(AuditBarrier.Log auditLog) {
            this.auditLog = Objects.requireNonNull(auditLog, "auditLog");
            return this;
        }

        /**
         * {@return this}
         *
         * @param network loopback and static-host settings; default {@link NetworkSettings#defaults()}
         */
        public Builder network(NetworkSettings network) {
            this.network = Objects.requireNonNull(network, "network");
            return this;
        }

        /**
         * {@return this}
         *
         * @param timeout upstream TCP connect and TLS handshake timeout; default 10 s
         */
        public Builder connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout);
            return this;
        }

        /**
         * {@return this}
         *
         * @param timeout longest wait for an upstream byte, also the quiet limit of tunnels and
         * WebSocket relays; default 5 min
         */
        public Builder upstreamReadTimeout(Duration timeout) {
            this.upstreamReadTimeout = positive(timeout);
            return this;
        }

        /**
         * {@return this}
         *
         * @param timeout how long idle upstream connections are pooled; default 4 s
         */
        public Builder upstreamIdleTimeout(Duration timeout) {
            this.upstreamIdleTimeout = positive(timeout);
            return this;
        }

        /**
         * {@return this}
         *
         * @param timeout how long an idle client connection is kept open; default 2 min
         */
        public Builder clientIdleTimeout(Duration timeout) {
            this.clientIdleTimeout = positive(timeout);
            return this;
        }

        /**
         * {@return this}
         *
         * @param period how long {@link #stop()} lets in-flight requests finish; default 10 s
         */
        public Builder stopGracePeriod(Duration period) {
            this.stopGracePeriod = positive(period);
            return this;
        }

        /**
         * {@return this}
         *
         * @param bytes how many bytes of request bodies may be held in memory for middleware at once, over all
         *     connections (a buffered request reserves its size before its body is read and gives it back when its
         *     exchange ends; bodies no chain needs never reserve anything); default a quarter of the JVM's maximum
         *     heap, between 4 MiB and 1 GiB ({@link #defaultBodyBufferBudget()})
         * @throws IllegalArgumentException when {@code bytes} is outside 4 MiB (one largest body,
         *     {@link EnvelopeLimits#MAX_BODY_BYTES}) to {@link Integer#MAX_VALUE}
         */
        public Builder bodyBufferBudget(long bytes) {
            if (bytes < EnvelopeLimits.MAX_BODY_BYTES || bytes > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("body buffer budget " + bytes + " bytes is outside "
                        + EnvelopeLimits.MAX_BODY_BYTES + ".." + Integer.MAX_VALUE);
            }
            this.bodyBufferBudget = bytes;
            return this;
        }

        /**
         * {@return this}
         *
         * @param wait how long a request whose body must be buffered waits for room in the body buffer budget before
         *     it is answered {@code 503 body_buffer_busy}; default 10 s; zero refuses at once
         */
        public Builder bodyBufferWait(Duration wait) {
            if (wait.isNegative()) {
                throw new IllegalArgumentException("the body buffer wait must not be negative");
            }
            this.bodyBufferWait = wait;
            return this;
        }

        /**
         * {@return this}
         *
         * @param max the most client connections open at once over all clients; a connection over it is closed without
         *     being served and counted as {@code connection_limit}; default 2048 (each open connection may hold a
         *     request head of up to 64 KiB while it is read)
         * @throws IllegalArgumentException when {@code max} is below 1
         */
        public Builder maxConnections(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("max connections must be at least 1");
            }
            this.maxConnections = max;
            return this;
        }

        /**
         * {@return this}
         *
         * @param max the most client connections open at once from one client address (counted as
         *     {@code client_connection_limit} when over it), capped by {@link #maxConnections}; default 512
         * @throws IllegalArgumentException when {@code max} is below 1
         */
        public Builder maxConnectionsPerClient(int max) {
            if (max < 1) {
                throw new IllegalArgumentException("max connections per client must be at least 1");
            }
            this.maxConnectionsPerClient = max;
            return this;
        }

        /**
         * {@return this}
         *
         * @param timeout the deadline for a whole request head, from its first byte; a head not complete by then is
         *     answered {@code 408 request_head_timeout} and its connection closed; default 30 s
         */
        public Builder requestHeadTimeout(Duration timeout) {
            this.requestHeadTimeout = positive(timeout);
            return this;
        }

        /**
         * {@return this}
         *
         * @param timeout the deadline for reading a whole body buffered for the chain, from the start of its read; a
         *     body not complete by then is answered {@code 408 body_buffer_timeout}, its connection closed and its
         *     body buffer reservation given back, so a trickled upload cannot hold the budget; default 60 s
         */
        public Builder bodyBufferTimeout(Duration timeout) {
            this.bodyBufferTimeout = positive(timeout);
            return this;
        }

        /**
         * {@return this}
         *
         * @param bytesPerSecond the least average rate of a request body, buffered for the chain or streamed
         *     upstream, once its first 5 seconds have passed, in bytes per second (checked every second); a slower
         *     body is answered {@code 408 body_min_rate} and its connection closed (a streamed body's upstream
         *     connection too), so a trickle cannot hold a connection or a body buffer reservation until the whole
         *     deadline; default 1024; 0 turns it off
         * @throws IllegalArgumentException when negative
         */
        public Builder bodyMinBytesPerSecond(long bytesPerSecond) {
            if (bytesPerSecond < 0) {
                throw new IllegalArgumentException("the minimum body data rate must not be negative");
            }
            this.bodyMinBytesPerSecond = bytesPerSecond;
            return this;
        }

        /**
         * {@return this}
         *
         * @param grace how long a body may take before its average rate is checked against
         *     {@link #bodyMinBytesPerSecond} (then checked every second, or every {@code grace} if shorter); default
         *     5 s
         */
        public Builder bodyMinRateGrace(Duration grace) {
            this.bodyMinRateGrace = positive(grace);
            return this;
        }

        /**
         * {@return this}
         *
         * @param percent the share of the body buffer budget one client address may hold, 1 to 100 (never less than
         *     one 4 MiB body); a request over it waits (within {@link #bodyBufferWait}, holding none of the
         *     budget) for the client's own bodies to give room back, then is answered
         *     {@code 503 client_body_buffer_limit}; one client's uploads queue behind each other and cannot make
         *     another's wait; default 25
         * @throws IllegalArgumentException when out of range
         */
        public Builder bodyBufferClientSharePercent(int percent) {
            if (percent < 1 || percent > 100) {
                throw new IllegalArgumentException("the body buffer client share must be 1 to 100 percent");
            }
            this.bodyBufferClientSharePercent = percent;
            return this;
        }

        /**
         * The bound on middleware work: requests whose stages (or body-aware L7 rules) are evaluated at once, after
         * their body is buffered. Beyond it a request waits in a queue of {@link #maxQueuedMiddlewareWork} places
         * (served round-robin over client addresses); one more is shed: answered
         * {@code 503 middleware_admission_exhausted} with {@code Retry-After: 1}, and reported.
         *
         * @param running evaluations at once, 1 to 65536; default OpenShell's 32
         * @return this
         * @throws IllegalArgumentException when out of range
         */
        public Builder maxMiddlewareWork(int running) {
            new WorkAdmission(running, maxQueuedMiddlewareWork); // checks the range
            this.maxMiddlewareWork = running;
            return this;
        }

        /**
         * {@return this}
         *
         * @param queued requests that may wait for a place of {@link #maxMiddlewareWork}, 0 to 65536; default
         *     OpenShell's 64
         * @throws IllegalArgumentException when out of range
         */
        public Builder maxQueuedMiddlewareWork(int queued) {
            new WorkAdmission(maxMiddlewareWork, queued); // checks the range
            this.maxQueuedMiddlewareWork = queued;
            return this;
        }

        /**
         * Connections beyond a client address's cap ({@link #maxConnectionsPerClient}) are tied to their process
         * ({@link #connectionOwner}); one process may hold at most this many of them, so a process that holds its
         * address's whole share does not shut out the address's other processes.
         *
         * @param perProcess 0 (the address's cap is a hard cap) to 1000000; default 64
         * @return this
         * @throws IllegalArgumentException when out of range
         */
        public Builder maxConnectionsPerProcess(int perProcess) {
            if (perProcess < 0 || perProcess > 1_000_000) {
                throw new IllegalArgumentException("connections per process must be 0 to 1000000");
            }
            this.maxConnectionsPerProcess = perProcess;
            return this;
        }

        /**
         * {@return this}
         *
         * @param owner the PID of the process holding a connection's client end, empty when not found; called only
         *     for a connection over its address's cap, before a byte of it is read, and may block; default: never
         *     found (the address's cap is then a hard cap)
         */
        public Builder connectionOwner(java.util.function.Function<ClientConnection, java.util.OptionalLong> owner) {
            this.connectionOwner = Objects.requireNonNull(owner, "owner");
            return this;
        }

        /**
         * {@return the default body buffer budget, in bytes: a quarter of {@link Runtime#maxMemory()}, at least
         * {@link EnvelopeLimits#MAX_BODY_BYTES} (4 MiB) and at most 1 GiB}
         */
        public static long defaultBodyBufferBudget() {
            long quarter = Runtime.getRuntime().maxMemory() / 4;
            return Math.max(EnvelopeLimits.MAX_BODY_BYTES, Math.min(quarter, 1L << 30));
        }

        /**
         * {@return the proxy, not yet started}
         *
         * @throws IllegalStateException when no policy steps are set, or neither a state directory nor an operator CA
         */
        public SupervisorProxy build() {
            if (policy == null) {
                throw new IllegalStateException("policy steps (or an admission) are required");
            }
            if (stateDirectory == null && operatorCaCert == null) {
                throw new IllegalStateException("a state directory or an operator CA is required");
            }
            return new SupervisorProxy(this);
        }

        private static Duration positive(Duration d) {
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException("a timeout must be positive");
            }
            return d;
        }
    }
}
