package dev.openshell.supervisor.cli;

import dev.openshell.middleware.spi.internal.RpcTimeout;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.grpc.tck.Probe;
import dev.openshell.supervisor.grpc.tck.Tck;
import dev.openshell.supervisor.grpc.tck.TckOptions;
import dev.openshell.supervisor.grpc.tck.TckReport;
import dev.openshell.supervisor.runtime.ExtensionAuth;
import dev.openshell.supervisor.runtime.Supervisor;
import jakarta.json.Json;
import jakarta.json.JsonException;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import jakarta.json.stream.JsonParsingException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code supervisor tck}: the contract conformance kit for middleware service authors. Connects to a running
 * {@code openshell.middleware.v1} service as the supervisor would and prints one line per named check (PASS, WARN,
 * FAIL or SKIP, a reason, the measured figure); {@code --format json} prints one JSON object for CI. Exit codes: 0 no
 * check failed, 1 a check failed, 2 usage error (including an unreadable or invalid {@code --config}).
 */
@Command(name = "tck", description = {
        "Check a running middleware service against openshell.middleware.v1 the way this supervisor calls it: "
                + "Describe, ValidateConfig, EvaluateHttpRequest with generated requests up to every envelope "
                + "limit, result validity, latency against the effective timeout, deadlines, and optionally load.",
        "Exits 0 only if no check fails."})
final class TckCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--endpoint", required = true, paramLabel = "HOST:PORT",
            description = "The service, e.g. 127.0.0.1:50051 or [::1]:8443.")
    String endpoint;

    @Option(names = "--plaintext", description = "Plaintext HTTP/2 (as a registration with allow_insecure = true).")
    boolean plaintext;

    @Option(names = "--tls-ca", paramLabel = "FILE",
            description = "PEM CA bundle that signs the service's certificate (default: the JDK's trust store).")
    Path tlsCa;

    @Option(names = "--tls-cert", paramLabel = "FILE", description = "PEM client certificate (mutual TLS).")
    Path tlsCert;

    @Option(names = "--tls-key", paramLabel = "FILE", description = "PEM PKCS#8 key of --tls-cert.")
    Path tlsKey;

    @Option(names = "--binding", paramLabel = "ID", description = "Binding to exercise (default: the first).")
    String binding;

    @Option(names = "--config", paramLabel = "FILE.json",
            description = "The config your policy gives the binding, as a JSON object (default: {}).")
    Path config;

    @Option(names = "--body", paramLabel = "FILE",
            description = "Also send this body (repeatable; at most 4 MiB; content type from the extension: .json, "
                    + ".txt, .xml, .png, .jpg), after the built-in probes (e-mail addresses, secret-shaped tokens, "
                    + "an image part).")
    java.util.List<Path> bodies = new java.util.ArrayList<>();

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "500ms",
            description = "The registration's timeout, 10ms..30s (default: ${DEFAULT-VALUE}, the platform's).")
    String timeout;

    @Option(names = "--name", paramLabel = "NAME", defaultValue = "tck",
            description = "Registration name (the binding ID of a service that sends none; default: "
                    + "${DEFAULT-VALUE}).")
    String name;

    @Option(names = "--samples", paramLabel = "N", defaultValue = "" + TckOptions.DEFAULT_SAMPLES,
            description = "Evaluations per body size for the latency checks (default: ${DEFAULT-VALUE}).")
    int samples;

    @Option(names = "--load", paramLabel = "N", defaultValue = "0",
            description = "Also run N concurrent evaluations for --load-seconds (default: no load check).")
    int load;

    @Option(names = "--load-seconds", paramLabel = "S", defaultValue = "3",
            description = "Length of the load check, 1..60 (default: ${DEFAULT-VALUE}).")
    int loadSeconds;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "text",
            description = "Output format: text or json (default: ${DEFAULT-VALUE}).")
    Format format;

    enum Format { text, json }

    @Option(names = "--audience", paramLabel = "AUD",
            description = "The extension token audience of the registration (default: "
                    + "urn:openshell:extension:middleware:NAME).")
    String audience;

    @Option(names = "--no-tokens", description = "Send no extension token over TLS and skip the auth.* checks.")
    boolean noTokens;

    @CommandLine.Mixin
    CaCommand.Location location = new CaCommand.Location();

    TckCommand() {
    }

    @Override
    public Integer call() {
        TckOptions options = options();
        // the kit reports every refusal itself: keep the adapter's warnings out of its output
        Main.logLevel("dev.openshell.supervisor.grpc", java.util.logging.Level.SEVERE);
        TckReport report = Tck.run(options);
        PrintWriter out = spec.commandLine().getOut();
        out.print(format == Format.json ? report.toJson() + "\n" : report.toText());
        out.flush();
        return report.passed() ? 0 : 1;
    }

    private TckOptions options() {
        if (plaintext && (tlsCa != null || tlsCert != null || tlsKey != null)) {
            throw usage("--plaintext excludes --tls-ca, --tls-cert and --tls-key");
        }
        if ((tlsCert == null) != (tlsKey == null)) {
            throw usage("mutual TLS needs both --tls-cert and --tls-key");
        }
        if (!endpoint.matches("(\\[[0-9A-Fa-f:.]+\\]|[^\\[\\]/:@?#\\s]+):[0-9]{1,5}")) {
            throw usage("--endpoint must be HOST:PORT, e.g. 127.0.0.1:50051");
        }
        Duration rpcTimeout;
        try {
            rpcTimeout = RpcTimeout.parse(timeout);
        } catch (IllegalArgumentException e) {
            throw usage("--timeout: " + e.getMessage());
        }
        ServiceRegistration.Builder b = ServiceRegistration.builder(name,
                URI.create((plaintext ? "http://" : "https://") + endpoint), 0).timeout(rpcTimeout)
                .allowInsecure(plaintext);
        if (tlsCa != null) {
            b.caBundle(tlsCa);
        }
        if (tlsCert != null) {
            b.clientCertificate(tlsCert, tlsKey);
        }
        if (audience != null) {
            b.audience(audience);
        }
        TckOptions options;
        try {
            options = new TckOptions(b.build(), Optional.ofNullable(binding), readConfig(), samples, load,
                    Duration.ofSeconds(loadSeconds), dev.openshell.supervisor.engine.chain.StageLimits.DEFAULT,
                    readBodies());
        } catch (IllegalArgumentException e) {
            throw usage(e.getMessage());
        }
        return plaintext || noTokens ? options : options.withTokens(tokens());
    }

    /** The supervisor's own issuer: the keys of the state directory, the identity of the gateway configuration. */
    private ExtensionTokenIssuer tokens() {
        try {
            var gateway = location.gateway(spec.commandLine().getErr());
            return ExtensionAuth.open(gateway, Supervisor.stateDirectory(Optional.ofNullable(location.stateDir),
                    gateway));
        } catch (CaCommand.Failed e) {
            throw usage("the gateway configuration is invalid");
        } catch (IOException | RuntimeException e) {
            throw usage("cannot open the extension token signing keys: " + e.getMessage()
                    + " (--no-tokens sends none)");
        }
    }

    private java.util.List<Probe> readBodies() {
        java.util.List<Probe> probes = new java.util.ArrayList<>();
        for (Path file : bodies) {
            try {
                probes.add(Probe.ofFile(file, probes.size() + 1));
            } catch (IOException e) {
                throw usage("--body " + file + ": " + (e instanceof java.nio.file.NoSuchFileException
                        ? "no such file" : e.getMessage()));
            }
        }
        return probes;
    }

    private JsonObject readConfig() {
        if (config == null) {
            return JsonValue.EMPTY_JSON_OBJECT;
        }
        try (Reader r = Files.newBufferedReader(config, StandardCharsets.UTF_8);
             JsonReader json = Json.createReader(r)) {
            JsonValue v = json.readValue();
            if (!(v instanceof JsonObject o)) {
                throw usage(config + ": the config must be a JSON object");
            }
            return o;
        } catch (JsonParsingException e) {
            var at = e.getLocation();
            throw usage("%s:%d:%d: not valid JSON".formatted(config, at.getLineNumber(), at.getColumnNumber()));
        } catch (IOException | JsonException e) {
            throw usage("cannot read " + config + ": " + e.getMessage());
        }
    }

    private CommandLine.ParameterException usage(String message) {
        return new CommandLine.ParameterException(spec.commandLine(), message);
    }
}
