package dev.openshell.supervisor.cli;

import dev.openshell.examples.privacyguard.CallerTokenVerifier;
import dev.openshell.examples.privacyguard.PrivacyGuardServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code supervisor privacy-guard}: runs the example Privacy Guard middleware service until SIGTERM (or SIGINT).
 * Prints {@code privacy-guard listening on HOST:PORT} (the bound port, also when {@code --listen} asked for port 0)
 * once it accepts calls. Exit codes: 2 usage error, 1 the service could not start.
 */
@Command(name = "privacy-guard", description = {
        "Run the example Privacy Guard middleware service (openshell.middleware.v1 over gRPC), binding "
                + "examples/privacy-guard. Stops on SIGTERM.",
        "Register it in the supervisor with grpc_endpoint = \"https://HOST:PORT\" (or \"http://...\" with "
                + "allow_insecure = true when started without TLS)."})
final class PrivacyGuardCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--listen", required = true, paramLabel = "HOST:PORT",
            description = "Address to listen on, e.g. 127.0.0.1:50051 or [::1]:50051; port 0 picks a free port.")
    String listen;

    @Option(names = "--tls-cert", paramLabel = "FILE", description = "PEM certificate chain (enables TLS).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "PEM private key of --tls-cert.")
    Path tlsKey;

    @Option(names = "--client-ca", paramLabel = "FILE",
            description = "PEM CA bundle; clients must present a certificate it signed (mutual TLS).")
    Path clientCa;

    @Option(names = "--jwks", paramLabel = "FILE|URL", description = {
            "JWKS of the OpenShell extension tokens to require on every call (a file, or an http(s) URL such as the "
                    + "supervisor's http://127.0.0.1:9464/.well-known/jwks.json, fetched again for an unknown key). "
                    + "Calls without a valid token are refused UNAUTHENTICATED. Without it, calls are not "
                    + "authenticated."})
    String jwks;

    @Option(names = "--audience", paramLabel = "AUD", defaultValue = "urn:openshell:extension:middleware:privacy-guard",
            description = "The exact token audience to require (default: ${DEFAULT-VALUE}); also advertised as "
                    + "expected_audience in Describe. Needs --jwks.")
    String audience;

    @Option(names = "--issuer", paramLabel = "ISS",
            description = "The exact token issuer to require, e.g. openshell-gateway:GATEWAY_ID. Needs --jwks.")
    String issuer;

    PrivacyGuardCommand() {
    }

    @Override
    public Integer call() {
        int colon = listen.lastIndexOf(':');
        String host = colon <= 0 ? "" : listen.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(listen.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (host.isEmpty() || port < 0 || port > 65535) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--listen must be HOST:PORT with a port in 0..65535, e.g. 127.0.0.1:50051");
        }
        PrivacyGuardServer.Options options;
        try {
            options = new PrivacyGuardServer.Options(host, port, Optional.ofNullable(tlsCert),
                    Optional.ofNullable(tlsKey), Optional.ofNullable(clientCa));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
        }
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (jwks == null && issuer != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--issuer needs --jwks");
        }
        Optional<CallerTokenVerifier> tokens = Optional.empty();
        if (jwks != null) {
            try {
                tokens = Optional.of(CallerTokenVerifier.open(jwks, audience, Optional.ofNullable(issuer),
                        Clock.systemUTC()));
            } catch (IOException | RuntimeException e) {
                err.println("privacy-guard: cannot load the JWKS: " + e.getMessage());
                err.flush();
                return 1;
            }
        }
        PrivacyGuardServer server;
        try {
            server = PrivacyGuardServer.start(options, tokens);
        } catch (RuntimeException e) {
            err.println("privacy-guard: cannot start: " + e.getMessage());
            err.flush();
            return 1;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "privacy-guard-shutdown"));
        out.println("privacy-guard listening on " + server.address()
                + (options.tlsCertificate().isPresent() ? (options.clientCa().isPresent() ? " (mTLS)" : " (TLS)")
                : " (plaintext)") + (tokens.isPresent() ? ", extension tokens for " + audience + " required"
                : ", calls not authenticated"));
        out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }
}
