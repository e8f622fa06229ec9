package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.runtime.Supervisor;
import dev.openshell.supervisor.runtime.Validation;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor validate}: the start-up validation of {@code supervisor run} without listening anywhere (see
 * {@link Validation} for what is checked). Prints every problem on standard output, one per line, as
 * {@code FILE:LINE:COLUMN: error|warning: KEY: MESSAGE}, then a summary line; text a plugin or external service
 * returned from {@code ValidateConfig} follows on its own indented line, marked as theirs. With
 * {@code --format json} it prints one object instead:
 * <pre>{@code
 * {"valid": false, "errors": 1, "warnings": 0,
 *  "problems": [{"severity": "error", "file": "policy.yaml", "line": 12, "column": 17,
 *                "key": "network_middlewares.pii.config", "message": "...", "detail": "..."}]}
 * }</pre>
 * ({@code line} and {@code column} are 0 when unknown; {@code detail} is present only with untrusted detail.)
 * Exit codes: 0 no errors (warnings allowed), 1 at least one error, 2 usage error.
 */
@Command(name = "validate", description = {
        "Validate a policy and gateway configuration as 'supervisor run' does at start-up.",
        "Includes Describe and ValidateConfig of registered external services; listens nowhere.",
        "Prints every problem as FILE:LINE:COLUMN: error|warning: KEY: MESSAGE.",
        "Exits 0 when there is no error, 1 otherwise."})
final class ValidateCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--policy", paramLabel = "FILE", required = true, description = "Sandbox policy (YAML).")
    Path policy;

    @Option(names = "--gateway-config", paramLabel = "FILE", description = "Gateway configuration (TOML).")
    Path gateway;

    @Option(names = "--plugins", paramLabel = "DIR",
            description = "Plugins directory (default: the gateway's plugins_dir, else the image's plugins/).")
    Path plugins;

    @Option(names = "--skip-services",
            description = "Do not contact registered external services (bindings only they provide are not checked).")
    boolean skipServices;

    @Option(names = "--skip-credentials",
            description = "Do not resolve credential sources (validation usually runs without the supervisor's secrets).")
    boolean skipCredentials;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "text",
            description = "Output format: text or json (default: ${DEFAULT-VALUE}).")
    Format format;

    enum Format { text, json }

    ValidateCommand() {
    }

    @Override
    public Integer call() {
        // every problem is printed below, once: keep the loaders' own warnings out of the report
        Main.logLevel("dev.openshell", java.util.logging.Level.SEVERE);
        Main.logLevel("io.grpc", java.util.logging.Level.SEVERE);
        Validation.Report report = Validation.run(new Validation.Request(Optional.of(policy),
                Optional.ofNullable(gateway), Optional.ofNullable(plugins), !skipServices, !skipCredentials,
                System.getenv()));
        PrintWriter out = spec.commandLine().getOut();
        if (format == Format.json) {
            out.println(json(report));
        } else {
            for (ConfigProblem p : report.problems()) {
                out.println(p.describe());
                p.untrustedDetail().ifPresent(d -> out.println("    " + Supervisor.UNTRUSTED_LABEL + d));
            }
            String what = gateway == null ? policy.toString() : policy + " with " + gateway;
            out.printf("%s: %s (%d error(s), %d warning(s))%n", what, report.valid() ? "valid" : "INVALID",
                    report.errors().size(), report.warnings().size());
        }
        out.flush();
        return report.valid() ? 0 : 1;
    }

    static String json(Validation.Report report) {
        JsonArrayBuilder problems = Json.createArrayBuilder();
        for (ConfigProblem p : report.problems()) {
            JsonObjectBuilder o = Json.createObjectBuilder()
                    .add("severity", p.isError() ? "error" : "warning")
                    .add("file", p.location().file())
                    .add("line", p.location().line())
                    .add("column", p.location().column())
                    .add("key", p.keyPath())
                    .add("message", p.message());
            p.untrustedDetail().ifPresent(d -> o.add("detail", d));
            problems.add(o);
        }
        return Json.createObjectBuilder()
                .add("valid", report.valid())
                .add("errors", report.errors().size())
                .add("warnings", report.warnings().size())
                .add("problems", problems)
                .build().toString();
    }
}
