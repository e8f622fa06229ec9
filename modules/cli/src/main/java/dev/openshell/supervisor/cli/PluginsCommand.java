package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.PluginHost;
import dev.openshell.supervisor.engine.RegisteredBinding;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor plugins}: lists every binding the plugin host discovered, and every refusal.
 * Exit code 0 when nothing was refused, 1 otherwise.
 */
@Command(name = "plugins", description = {
        "List every middleware binding: built-ins in the image and plugins from the plugins directory.",
        "Exits 1 if the plugins directory does not exist or cannot be read, or if any plugin, provider or binding "
                + "was refused (each refusal is printed)."})
final class PluginsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--plugins", paramLabel = "DIR",
            description = "Plugins directory (default: the image's plugins/ directory).")
    Path pluginsDir;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "text",
            description = "Output format: text or json (default: ${DEFAULT-VALUE}).")
    Format format;

    enum Format { text, json }

    PluginsCommand() {
    }

    @Override
    public Integer call() {
        Path dir = pluginsDir != null ? pluginsDir : Main.home().map(h -> h.resolve("plugins")).orElse(null);
        // this command prints every refusal itself: keep the host's warnings out of the report
        Main.logLevel(PluginHost.class.getName(), java.util.logging.Level.SEVERE);
        PluginHost.Builder b = PluginHost.builder();
        java.util.Optional<String> problem = dir == null ? java.util.Optional.empty()
                : PluginHost.directoryProblem(dir);
        if (problem.isPresent()) {
            spec.commandLine().getErr().println("supervisor plugins: " + problem.get());
            spec.commandLine().getErr().flush();
            return 1;
        }
        if (dir != null) {
            b.pluginsDirectory(dir);
        }
        PluginHost host = b.load();
        PrintWriter out = spec.commandLine().getOut();
        List<RegisteredBinding> bindings = host.registry().bindings().castToList();
        if (format == Format.json) {
            out.println(json(bindings, host.failures().castToList(), dir));
        } else {
            text(out, bindings, dir);
            PrintWriter err = spec.commandLine().getErr();
            for (PluginFailure f : host.failures()) {
                err.println("refused: " + f.source() + ": " + f.message());
            }
        }
        out.flush();
        return host.failures().isEmpty() ? 0 : 1;
    }

    private static void text(PrintWriter out, List<RegisteredBinding> bindings, Path dir) {
        String fmt = "%-24s %-34s %-9s %-30s %s%n";
        out.printf(fmt, "BINDING ID", "MODULE", "LAYER", "OPERATION/PHASE", "MAX BODY (bytes)");
        for (RegisteredBinding r : bindings) {
            out.printf(fmt, r.id(), r.origin().name(), r.origin().kind().word(),
                    r.binding().operation() + "/" + r.binding().phase(), r.binding().maxBodyBytes());
        }
        out.printf("%d binding(s); plugins directory: %s%n", bindings.size(),
                dir == null ? "(none)" : dir.toAbsolutePath());
    }

    private static String json(List<RegisteredBinding> bindings, List<PluginFailure> failures, Path dir) {
        JsonArrayBuilder list = Json.createArrayBuilder();
        for (RegisteredBinding r : bindings) {
            JsonObjectBuilder o = Json.createObjectBuilder()
                    .add("binding_id", r.id().value())
                    .add("module", r.origin().name())
                    .add("layer", r.origin().kind().word())
                    .add("operation", r.binding().operation().name())
                    .add("phase", r.binding().phase().name())
                    .add("max_body_bytes", r.binding().maxBodyBytes());
            r.origin().source().ifPresent(s -> o.add("source", s));
            r.binding().timeout().ifPresent(t -> o.add("timeout_ms", t.toMillis()));
            list.add(o);
        }
        JsonArrayBuilder refused = Json.createArrayBuilder();
        for (PluginFailure f : failures) {
            refused.add(Json.createObjectBuilder().add("source", f.source()).add("message", f.message()));
        }
        JsonObjectBuilder root = Json.createObjectBuilder().add("bindings", list).add("refused", refused);
        if (dir != null) {
            root.add("plugins_directory", dir.toAbsolutePath().toString());
        } else {
            root.addNull("plugins_directory");
        }
        return root.build().toString();
    }
}
