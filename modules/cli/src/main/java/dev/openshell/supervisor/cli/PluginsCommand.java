package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.engine.PluginFailure;
import dev.openshell.supervisor.engine.PluginHost;
import dev.openshell.supervisor.engine.PluginPins;
import dev.openshell.supervisor.engine.RegisteredBinding;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.gateway.GatewayConfig;
import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObjectBuilder;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
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
        "A plugin loads only when the gateway configuration pins it by SHA-256 ([[openshell.supervisor.plugin_pins]]); "
                + "--pin prints the entries to paste for every plugin in the directory.",
        "Exits 1 if the plugins directory does not exist or cannot be read, or if any plugin, provider or binding "
                + "was refused (each refusal is printed)."})
final class PluginsCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--plugins", paramLabel = "DIR",
            description = "Plugins directory (default: the image's plugins/ directory).")
    Path pluginsDir;

    @Option(names = "--gateway-config", paramLabel = "FILE",
            description = "Gateway configuration (TOML) whose plugin_pins decide which plugins load (default: none"
                    + " pinned, so every plugin is refused, as 'supervisor run' would without pins).")
    Path gateway;

    @Option(names = "--pin", description = "Print a [[openshell.supervisor.plugin_pins]] entry (entry name and"
            + " SHA-256) for every plugin in the plugins directory, to paste into the gateway configuration after"
            + " you have decided to trust it; loads nothing.")
    boolean pin;

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
        if (pin) {
            return printPins(dir);
        }
        PluginHost.Builder b = PluginHost.builder();
        java.util.Optional<String> problem = dir == null ? java.util.Optional.empty()
                : PluginHost.directoryProblem(dir);
        if (problem.isPresent()) {
            spec.commandLine().getErr().println("supervisor plugins: " + problem.get());
            spec.commandLine().getErr().flush();
            return 1;
        }
        if (gateway != null) {
            Loaded<GatewayConfig> loaded;
            try {
                loaded = GatewayConfigLoader.load(gateway);
            } catch (PolicyException e) {
                PrintWriter err = spec.commandLine().getErr();
                err.println("supervisor: " + e.file() + " is invalid (" + e.errors().size() + " error(s))");
                for (ConfigProblem p : e.problems()) {
                    err.println("  " + p.describe());
                }
                err.flush();
                return 1;
            }
            Map<String, String> pins = new LinkedHashMap<>();
            loaded.value().pluginPins().forEach(p -> pins.put(p.entry(), p.sha256()));
            b.pins(PluginPins.of(pins));
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

    private int printPins(Path dir) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (dir == null || !Files.isDirectory(dir)) {
            err.println("no plugins directory to pin: " + (dir == null ? "(none)" : dir.toAbsolutePath()));
            return 1;
        }
        int status = 0;
        List<Path> entries;
        try (Stream<Path> s = Files.list(dir)) {
            entries = s.sorted().filter(PluginsCommand::isPluginEntry).toList();
        } catch (IOException e) {
            err.println("cannot list " + dir.toAbsolutePath() + ": " + e.getMessage());
            return 1;
        }
        out.println("# plugin pins for " + dir.toAbsolutePath() + ": paste into the gateway configuration only what"
                + " you trust; an in-process plugin runs with the supervisor's privileges");
        for (Path e : entries) {
            try {
                String sha = PluginPins.digest(e);
                out.println();
                out.println("[[openshell.supervisor.plugin_pins]]");
                out.println("entry = \"" + e.getFileName() + "\"");
                out.println("sha256 = \"" + sha + "\"");
            } catch (IOException ex) {
                err.println("cannot digest " + e.getFileName() + ": " + ex.getMessage());
                status = 1;
            }
        }
        out.flush();
        return status;
    }

    private static boolean isPluginEntry(Path p) {
        String name = p.getFileName().toString();
        if (name.startsWith(".") || name.endsWith(".txt") || name.endsWith(".md")) {
            return false;
        }
        return Files.isDirectory(p) || (Files.isRegularFile(p) && name.endsWith(".jar"));
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
