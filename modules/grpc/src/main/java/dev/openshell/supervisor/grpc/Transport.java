package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.supervisor.grpc.auth.CallerTokens;
import io.grpc.ChannelCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.CompositeChannelCredentials;
import io.grpc.ConnectivityState;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Channels to registered services, and safe descriptions of transport failures. */
final class Transport {
    /** Sent as the {@code user-agent} prefix on every call. */
    static final String USER_AGENT = "openshell-supervisor";
    /** Least time given to connection set-up (TCP, TLS) before {@code Describe}'s own deadline starts. */
    static final Duration MIN_CONNECT_BUDGET = Duration.ofSeconds(5);

    private Transport() {
    }

    /**
     * Opens a channel (lazily connecting). {@code https://} endpoints use TLS with the configured CA bundle (else the
     * JDK's trust store), host name verification against the endpoint's host, and the client certificate when one
     * is configured; {@code http://} endpoints are plaintext (the registration guarantees {@code allow_insecure}).
     * Inbound messages may be up to {@link EnvelopeLimits#MIN_GRPC_MESSAGE_BYTES}.
     *
     * @throws IOException if a PEM file cannot be read; the message names the file
     * @throws IllegalArgumentException if a PEM file does not hold what it should
     */
    static ManagedChannel open(ServiceRegistration reg) throws IOException {
        return open(reg, CallerTokens.NONE, List.of());
    }

    /**
     * Opens a channel as {@link #open(ServiceRegistration)} does, with the caller's extension token on every call of
     * an {@code https://} registration ({@link BearerCredentials}, never on a plaintext one), and client interceptors
     * (the conformance kit watches the raw answers with one; the supervisor installs none).
     */
    static ManagedChannel open(ServiceRegistration reg, CallerTokens tokens, List<ClientInterceptor> interceptors)
            throws IOException {
        ChannelCredentials credentials;
        if (reg.plaintext()) {
            credentials = InsecureChannelCredentials.create();
        } else {
            TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
            if (reg.tls().caBundle().isPresent()) {
                tls.trustManager(readable(reg.tls().caBundle().get(), "CA bundle").toFile());
            }
            if (reg.tls().mutual()) {
                tls.keyManager(readable(reg.tls().clientCertificate().get(), "client certificate").toFile(),
                        readable(reg.tls().clientKey().get(), "client key").toFile());
            }
            credentials = tokens == CallerTokens.NONE ? tls.build()
                    : CompositeChannelCredentials.create(tls.build(), new BearerCredentials(tokens, reg.audience()));
        }
        return NettyChannelBuilder.forAddress(reg.host(), reg.port(), credentials)
                .maxInboundMessageSize(EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES)
                .userAgent(USER_AGENT)
                // one warm connection per service: no reconnect (and TLS handshake) on the hot path after a lull
                .idleTimeout(30, TimeUnit.DAYS)
                .intercept(interceptors)
                .build();
    }

    /**
     * Connects the channel and waits until it is ready or has failed, at most {@code max(timeout, 5 s)}. Connection
     * set-up (TCP and TLS handshakes, and in a fresh process the transport's class loading) is thereby kept out of
     * the {@code Describe} deadline, which is the registration's RPC timeout.
     *
     * @return the state reached: {@code READY}, {@code TRANSIENT_FAILURE} (the next call fails with the cause), or
     *     {@code CONNECTING} when the budget ran out
     */
    static ConnectivityState connect(ManagedChannel channel, Duration timeout) throws InterruptedException {
        long budget = Math.max(timeout.toNanos(), MIN_CONNECT_BUDGET.toNanos());
        long deadline = System.nanoTime() + budget;
        ConnectivityState state = channel.getState(true);
        while (state != ConnectivityState.READY && state != ConnectivityState.TRANSIENT_FAILURE
                && state != ConnectivityState.SHUTDOWN) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            CountDownLatch changed = new CountDownLatch(1);
            channel.notifyWhenStateChanged(state, changed::countDown);
            changed.await(left, TimeUnit.NANOSECONDS);
            state = channel.getState(true);
        }
        return state;
    }

    private static Path readable(Path file, String what) throws IOException {
        if (!java.nio.file.Files.isReadable(file)) {
            throw new IOException("cannot read the " + what + " file " + file);
        }
        return file;
    }

    /**
     * Describes a failed call for logs and exceptions: the status code, plus the class and message of a local cause
     * (a connection or TLS error raised in this process). The status description is never included: it may come from
     * the service, whose text is untrusted.
     */
    static String describe(StatusRuntimeException e) {
        Status s = e.getStatus();
        Throwable cause = s.getCause();
        if (cause == null) {
            return "gRPC status " + s.getCode();
        }
        Throwable root = cause;
        for (int i = 0; i < 16 && root.getCause() != null && root.getCause() != root; i++) {
            root = root.getCause();
        }
        return "gRPC status " + s.getCode() + " (" + oneLine(root) + ")";
    }

    /** A throwable's simple class name and message on one line, at most 240 characters. */
    static String oneLine(Throwable t) {
        String msg = t.getMessage();
        String line = msg == null || msg.isEmpty() ? t.getClass().getSimpleName()
                : t.getClass().getSimpleName() + ": " + msg;
        return Syntax.printable(line, 240);
    }
}
