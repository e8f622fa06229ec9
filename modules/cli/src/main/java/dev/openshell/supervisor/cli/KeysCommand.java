package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.runtime.ExtensionAuth;
import dev.openshell.supervisor.runtime.Supervisor;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code supervisor keys}: the public keys of the extension tokens the supervisor sends to middleware services
 * registered over TLS (OpenShell RFC 0009 appendix "Extension Authentication"). {@code export} writes the JWKS (and,
 * with {@code --jwks-uri}, the discovery document) for services that cannot reach the admin listener. The keys are
 * the ones {@code supervisor run} uses: {@code <state dir>/extension-keys} (created on first use).
 */
@Command(name = "keys", description = "The public keys of the supervisor's extension tokens: export them.",
        subcommands = {KeysCommand.Export.class})
final class KeysCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    KeysCommand() {
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: export");
    }

    /** {@code supervisor keys export}. */
    @Command(name = "export", description = {
            "Write the JWKS that verifies the supervisor's extension tokens (the same document the admin listener "
                    + "serves at /.well-known/jwks.json), for services that cannot reach the admin listener.",
            "With --discovery-out and --jwks-uri, also write the discovery document "
                    + "(/.well-known/openid-configuration) naming the issuer and where the JWKS is published.",
            "Keys are created if the state directory has none (as 'supervisor run' would). Export again after a key "
                    + "rotation: the JWKS keeps a retired key until every token it signed has expired."})
    static final class Export implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @CommandLine.Mixin
        CaCommand.Location location = new CaCommand.Location();

        @Option(names = "--out", paramLabel = "FILE", description = "Write the JWKS to FILE instead of standard output.")
        Path out;

        @Option(names = "--discovery-out", paramLabel = "FILE",
                description = "Also write the discovery document to FILE (needs --jwks-uri).")
        Path discoveryOut;

        @Option(names = "--jwks-uri", paramLabel = "URL",
                description = "The absolute URL where the JWKS will be published, e.g. "
                        + "https://keys.example/.well-known/jwks.json (the discovery's jwks_uri).")
        URI jwksUri;

        Export() {
        }

        @Override
        public Integer call() {
            PrintWriter err = spec.commandLine().getErr();
            if ((discoveryOut == null) != (jwksUri == null)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "--discovery-out and --jwks-uri go together");
            }
            if (jwksUri != null && !jwksUri.isAbsolute()) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--jwks-uri must be an absolute URL");
            }
            try {
                GatewayConfig gateway = location.gateway(err);
                Path state = Supervisor.stateDirectory(Optional.ofNullable(location.stateDir), gateway);
                ExtensionTokenIssuer issuer = ExtensionAuth.open(gateway, state);
                String jwks = issuer.keys().jwks() + "\n";
                if (out == null) {
                    spec.commandLine().getOut().print(jwks);
                    spec.commandLine().getOut().flush();
                } else {
                    Files.writeString(out, jwks, StandardCharsets.UTF_8);
                }
                if (discoveryOut != null) {
                    Files.writeString(discoveryOut, issuer.discovery(jwksUri) + "\n", StandardCharsets.UTF_8);
                }
                return 0;
            } catch (CaCommand.Failed e) {
                return 1;
            } catch (IOException | RuntimeException e) {
                err.println("supervisor: cannot export the extension token keys: " + e.getMessage());
                err.flush();
                return 1;
            }
        }
    }
}
