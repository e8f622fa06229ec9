package dev.openshell.examples.privacyguard;

import io.helidon.common.configurable.Resource;
import io.helidon.common.pki.Keys;
import io.helidon.common.tls.Tls;
import io.helidon.common.tls.TlsClientAuth;
import io.helidon.common.tls.TlsConfig;
import io.helidon.webserver.WebServer;
import io.helidon.webserver.grpc.GrpcConfig;
import io.helidon.webserver.grpc.GrpcRouting;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Runs {@link PrivacyGuardService} on a Helidon WebServer gRPC listener (HTTP/2: prior knowledge over plaintext, ALPN
 * {@code h2} over TLS).
 *
 * <p>Message limit: {@value #MAX_MESSAGE_BYTES} bytes (4 MiB of body plus 292 KiB for the rest of the envelope, RFC
 * 0009, "The middleware contract": "Middleware gRPC servers configure request and response message limits to cover
 * the 4 MiB body plus at least 292 KiB for the remaining envelope").
 *
 * <p>No JVM shutdown hook is installed: the caller stops the server ({@link #close()}), as the {@code supervisor
 * privacy-guard} command does on SIGTERM.
 *
 * <p>TLS: a PEM certificate chain and PEM private key (PKCS#8, or PKCS#1 RSA); with a client CA bundle, every client
 * must present a certificate signed by it (mutual TLS).
 */
public final class PrivacyGuardServer implements AutoCloseable {
    /** Largest gRPC message read, in bytes: 4 MiB + 292 KiB. */
    public static final int MAX_MESSAGE_BYTES = 4 * 1024 * 1024 + 292 * 1024;

    private final WebServer server;
    private final String host;

    private PrivacyGuardServer(WebServer server, String host) {
        this.server = server;
        this.host = host;
    }

    /**
     * Where and how to listen.
     *
     * @param host the address to bind, e.g. {@code 127.0.0.1}
     * @param port the port, 0 for any free port
     * @param tlsCertificate PEM certificate chain; present exactly when {@code tlsKey} is
     * @param tlsKey PEM private key
     * @param clientCa PEM CA bundle that client certificates must chain to (mutual TLS); needs TLS
     */
    public record Options(String host, int port, Optional<Path> tlsCertificate, Optional<Path> tlsKey,
                          Optional<Path> clientCa) {
        /**
         * @throws IllegalArgumentException if the port is out of range, only one of certificate and key is given, or
         *     a client CA is given without TLS
         */
        public Options {
            Objects.requireNonNull(host, "host");
            Objects.requireNonNull(tlsCertificate, "tlsCertificate");
            Objects.requireNonNull(tlsKey, "tlsKey");
            Objects.requireNonNull(clientCa, "clientCa");
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port " + port + " is outside 0..65535");
            }
            if (tlsCertificate.isPresent() != tlsKey.isPresent()) {
                throw new IllegalArgumentException("TLS needs both --tls-cert and --tls-key");
            }
            if (clientCa.isPresent() && tlsCertificate.isEmpty()) {
                throw new IllegalArgumentException("--client-ca needs TLS (--tls-cert and --tls-key)");
            }
        }

        /** {@return plaintext options} @param host the address @param port the port, 0 for any */
        public static Options plaintext(String host, int port) {
            return new Options(host, port, Optional.empty(), Optional.empty(), Optional.empty());
        }
    }

    /**
     * Starts listening.
     *
     * @param options where and how
     * @return the running server
     * @throws IllegalStateException if a PEM file cannot be read or the address cannot be bound (the message says
     *     which)
     */
    public static PrivacyGuardServer start(Options options) {
        return start(options, Optional.empty());
    }

    /**
     * Starts listening; with a verifier, every call must carry a valid OpenShell extension token
     * ({@link CallerAuthentication}) and the manifest advertises the verifier's audience as
     * {@code expected_audience}.
     *
     * @param options where and how
     * @param tokens the token verifier, or empty to accept calls without a token
     * @return the running server
     * @throws IllegalStateException if a PEM file cannot be read or the address cannot be bound
     */
    public static PrivacyGuardServer start(Options options, Optional<CallerTokenVerifier> tokens) {
        for (Optional<Path> file : java.util.List.of(options.tlsCertificate(), options.tlsKey(), options.clientCa())) {
            if (file.isPresent() && !Files.isReadable(file.get())) {
                throw new IllegalStateException("cannot read " + file.get());
            }
        }
        var builder = WebServer.builder()
                .host(options.host())
                .port(options.port())
                .shutdownHook(false)
                // gRPC writes headers, data and trailers as separate frames: without TCP_NODELAY, Nagle holds the
                // later ones until the client's delayed ACK (about 40 ms per call on loopback)
                .connectionOptions(o -> o.tcpNoDelay(true))
                .addProtocol(GrpcConfig.builder().maxReadBufferSize(MAX_MESSAGE_BYTES).build())
                .addRouting(routing(tokens));
        if (options.tlsCertificate().isPresent()) {
            builder.tls(tls(options));
        }
        WebServer server = builder.build().start();
        if (!server.isRunning() || server.port() <= 0) {
            server.stop();
            throw new IllegalStateException("cannot listen on " + options.host() + ":" + options.port());
        }
        return new PrivacyGuardServer(server, options.host());
    }

    private static GrpcRouting.Builder routing(Optional<CallerTokenVerifier> tokens) {
        GrpcRouting.Builder r = GrpcRouting.builder()
                .service(new PrivacyGuardService(tokens.map(CallerTokenVerifier::audience).orElse("")))
                .service(new PrivacyGuardResponses());
        tokens.ifPresent(v -> r.intercept(new CallerAuthentication(v)));
        return r;
    }

    private static Tls tls(Options options) {
        Keys keys = Keys.builder().pem(pem -> pem
                .key(Resource.create(options.tlsKey().get()))
                .certChain(Resource.create(options.tlsCertificate().get()))).build();
        TlsConfig.Builder tls = Tls.builder()
                .privateKey(keys.privateKey().orElseThrow(() ->
                        new IllegalStateException("no private key in " + options.tlsKey().get())))
                .privateKeyCertChain(keys.certChain());
        if (options.clientCa().isPresent()) {
            Keys ca = Keys.builder().pem(pem -> pem.certificates(Resource.create(options.clientCa().get()))).build();
            if (ca.certs().isEmpty()) {
                throw new IllegalStateException("no certificate in " + options.clientCa().get());
            }
            tls.trust(ca.certs()).clientAuth(TlsClientAuth.REQUIRED);
        }
        return tls.build();
    }

    /** {@return the bound port} */
    public int port() {
        return server.port();
    }

    /** {@return the listening host and bound port, e.g. {@code 127.0.0.1:50051} or {@code [::1]:50051}} */
    public String address() {
        String h = host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        return h + ":" + port();
    }

    /** {@return whether the server is running} */
    public boolean isRunning() {
        return server.isRunning();
    }

    /** Stops the server. */
    @Override
    public void close() {
        server.stop();
    }

    @Override
    public String toString() {
        return "PrivacyGuardServer[" + address() + "]";
    }
}
