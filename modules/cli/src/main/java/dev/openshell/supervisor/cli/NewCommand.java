package dev.openshell.supervisor.cli;

import dev.openshell.middleware.spi.BindingId;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code supervisor new plugin DIR} and {@code supervisor new service DIR --lang java|python}: a middleware project
 * that builds and runs as generated. Each holds the stage (a plugin's provider, or a gRPC service with its stub
 * generation, the contract's message-size options and a cancellation check), a sandbox policy that selects it for a
 * loopback upstream ({@code policy.yaml}), a gateway configuration for that upstream ({@code gateway.toml}: loopback
 * allowed, the host mapped to 127.0.0.1; for a service, its registration), a small echoing upstream
 * ({@code upstream.py}), {@code try.sh} (upstream, supervisor and two requests with curl; exit 0 only if the stage
 * tagged the first and denied the second) and a README of three commands. The stage is the same in all three: config
 * {@code {"block": WORD}} (unknown keys refused); a body holding WORD is denied with the reason code
 * {@code blocked_word} and a finding; any other request gets {@code x-openshell-middleware-NAME: checked}.
 *
 * <p>The templates are resources of this module ({@code new-templates/}: not a package name, so they add no package to
 * the module); the files name the image that generated
 * them ({@code bin/supervisor} by absolute path, the SDK version of {@code lib/sdk/}). Exit codes: 0 written, 1 the
 * directory exists and is not empty or cannot be written, 2 usage error.
 */
@Command(name = "new", description = "Generate a middleware project that builds and runs as written: a plugin, or an "
        + "external gRPC service (Java or Python), with a policy, a gateway file and a README of three commands.",
        subcommands = {NewCommand.Plugin.class, NewCommand.Service.class})
final class NewCommand implements Callable<Integer> {
    private static final String TEMPLATES = "new-templates/";
    /** The proto, copied into the module's resources at build time from {@code proto/}. */
    private static final String PROTO = "openshell/middleware/v1/middleware.proto";

    @Spec
    CommandSpec spec;

    NewCommand() {
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: plugin or service");
    }

    /** The options every kind shares. */
    static class Common {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "DIR", description = "The project directory (created; must be empty).")
        Path dir;

        @Option(names = "--id", paramLabel = "VENDOR/NAME",
                description = "The binding ID (default: example/NAME, NAME from DIR).")
        String id;

        @Option(names = "--upstream-port", paramLabel = "PORT", defaultValue = "8080",
                description = "Port of the loopback upstream try.sh starts (default: ${DEFAULT-VALUE}).")
        int upstreamPort;

        @Option(names = "--proxy-port", paramLabel = "PORT", defaultValue = "3128",
                description = "Port the supervisor of try.sh listens on (default: ${DEFAULT-VALUE}).")
        int proxyPort;

        Map<String, String> values(String name) {
            String bindingId = id != null ? id : "example/" + name;
            String problem = BindingId.problem(bindingId);
            if (problem != null || bindingId.startsWith(BindingId.RESERVED_PREFIX) || !bindingId.contains("/")) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--id: '" + ConsoleLogging.oneLine(
                        bindingId) + "' is not a binding ID of your own (VENDOR/NAME; " + (problem != null ? problem
                        : "openshell/ is reserved for built-ins") + ")");
            }
            for (int port : new int[] {upstreamPort, proxyPort}) {
                if (port < 1 || port > 65535) {
                    throw new CommandLine.ParameterException(spec.commandLine(), "port " + port
                            + " is outside 1..65535");
                }
            }
            String pkg = "com.example." + name.replace("-", "");
            Map<String, String> v = new LinkedHashMap<>();
            v.put("NAME", name);
            v.put("ID", bindingId);
            v.put("PACKAGE", pkg);
            v.put("PACKAGE_DIR", pkg.replace('.', '/'));
            v.put("CLASS", className(name));
            v.put("SPI_VERSION", spiVersion());
            v.put("SUPERVISOR", Main.home().map(h -> h.resolve("bin/supervisor").toAbsolutePath().toString())
                    .orElse("supervisor"));
            v.put("UPSTREAM_PORT", Integer.toString(upstreamPort));
            v.put("PROXY_PORT", Integer.toString(proxyPort));
            return v;
        }

        /** {@return the project name: DIR's file name, lowercased, runs of other characters as one '-'} */
        String name() {
            String n = Optional.ofNullable(dir.toAbsolutePath().normalize().getFileName()).map(Path::toString)
                    .orElse("").toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
            if (n.isEmpty() || !Character.isLetter(n.charAt(0))) {
                throw new CommandLine.ParameterException(spec.commandLine(), "DIR's name must begin with a letter "
                        + "(it names the project, its JAR and its binding)");
            }
            return n.length() > 40 ? n.substring(0, 40).replaceAll("-+$", "") : n;
        }

        int write(String kind, Map<String, String> values, List<String[]> files) {
            PrintWriter out = spec.commandLine().getOut();
            try {
                if (Files.exists(dir)) {
                    try (Stream<Path> s = Files.list(dir)) {
                        if (s.findAny().isPresent()) {
                            return fail(dir + " exists and is not empty");
                        }
                    }
                }
                for (String[] f : files) {
                    Path target = dir.resolve(expand(f[1], values));
                    Files.createDirectories(target.getParent());
                    byte[] bytes = resource(f[0]);
                    if (f[0].endsWith(".tmpl")) {
                        bytes = expand(new String(bytes, StandardCharsets.UTF_8), values)
                                .getBytes(StandardCharsets.UTF_8);
                    }
                    Files.write(target, bytes);
                    if (target.getFileName().toString().endsWith(".sh")) {
                        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
                    }
                }
            } catch (IOException e) {
                return fail("cannot write " + dir + " (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")");
            }
            out.println("created " + kind + " " + values.get("ID") + " in " + dir);
            out.println("next: the three commands of " + dir.resolve("README.md"));
            out.flush();
            return 0;
        }

        private int fail(String message) {
            spec.commandLine().getErr().println("supervisor new: " + message);
            spec.commandLine().getErr().flush();
            return 1;
        }
    }

    /** {@code supervisor new plugin DIR}: an in-process plugin built with Maven against the SDK. */
    @Command(name = "plugin", description = {"Generate an in-process plugin project (Maven, Java 21, reproducible "
            + "JAR so that its pin survives rebuilds) in DIR.",
            "Needs the SDK in the local Maven repository once: supervisor sdk install."})
    static final class Plugin extends Common implements Callable<Integer> {
        Plugin() {
        }

        @Override
        public Integer call() {
            Map<String, String> v = values(name());
            return write("plugin", v, withShared(List.of(
                    new String[] {"plugin/pom.xml.tmpl", "pom.xml"},
                    new String[] {"plugin/module-info.java.tmpl", "src/main/java/module-info.java"},
                    new String[] {"plugin/Provider.java.tmpl", "src/main/java/@PACKAGE_DIR@/@CLASS@Provider.java"},
                    new String[] {"plugin/gateway.toml.tmpl", "gateway.toml"},
                    new String[] {"plugin/try.sh.tmpl", "try.sh"},
                    new String[] {"plugin/README.md.tmpl", "README.md"})));
        }
    }

    /** {@code supervisor new service DIR --lang java|python}: an external {@code openshell.middleware.v1} service. */
    @Command(name = "service", description = "Generate an external gRPC middleware service project (Java with "
            + "Maven and grpc-java, or Python with grpcio) in DIR.")
    static final class Service extends Common implements Callable<Integer> {
        @Option(names = "--lang", required = true, paramLabel = "LANG", description = "java or python.")
        Lang lang;

        @Option(names = "--service-port", paramLabel = "PORT", defaultValue = "50051",
                description = "Port the service listens on, registered in gateway.toml (default: ${DEFAULT-VALUE}).")
        int servicePort;

        enum Lang { java, python }

        Service() {
        }

        @Override
        public Integer call() {
            Map<String, String> v = values(name());
            if (servicePort < 1 || servicePort > 65535) {
                throw new CommandLine.ParameterException(spec.commandLine(), "port " + servicePort
                        + " is outside 1..65535");
            }
            v.put("SERVICE_PORT", Integer.toString(servicePort));
            v.put("LANG", lang.name());
            try (InputStream in = NewCommand.class.getResourceAsStream(TEMPLATES + "versions.properties")) {
                java.util.Properties versions = new java.util.Properties();
                if (in != null) {
                    versions.load(in);
                }
                versions.forEach((k, val) -> v.put((String) k, (String) val));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            List<String[]> files = new java.util.ArrayList<>(List.of(
                    new String[] {"service/gateway.toml.tmpl", "gateway.toml"},
                    new String[] {"service/config.json", "config.json"},
                    new String[] {"service/try.sh.tmpl", "try.sh"}));
            if (lang == Lang.python) {
                files.add(new String[] {"service/python/service.py.tmpl", "service.py"});
                files.add(new String[] {"service/python/build.sh", "build.sh"});
                files.add(new String[] {"service/python/serve.sh.tmpl", "serve.sh"});
                files.add(new String[] {"service/python/README.md.tmpl", "README.md"});
                files.add(new String[] {"proto/" + PROTO, "proto/" + PROTO});
            } else {
                files.add(new String[] {"service/java/pom.xml.tmpl", "pom.xml"});
                files.add(new String[] {"service/java/Service.java.tmpl",
                    "src/main/java/@PACKAGE_DIR@/@CLASS@Service.java"});
                files.add(new String[] {"service/java/build.sh", "build.sh"});
                files.add(new String[] {"service/java/serve.sh.tmpl", "serve.sh"});
                files.add(new String[] {"service/java/README.md.tmpl", "README.md"});
                files.add(new String[] {"proto/" + PROTO, "src/main/proto/" + PROTO});
            }
            return write("service", v, withShared(files));
        }
    }

    private static List<String[]> withShared(List<String[]> files) {
        return Stream.concat(files.stream(), Stream.of(
                new String[] {"shared/policy.yaml.tmpl", "policy.yaml"},
                new String[] {"shared/upstream.py", "upstream.py"},
                new String[] {"shared/gitignore", ".gitignore"})).toList();
    }

    /** {@return {@code text} with every {@code @KEY@} of {@code values} replaced} */
    static String expand(String text, Map<String, String> values) {
        String s = text;
        for (Map.Entry<String, String> e : values.entrySet()) {
            s = s.replace("@" + e.getKey() + "@", e.getValue());
        }
        return s;
    }

    private static byte[] resource(String name) throws IOException {
        try (InputStream in = NewCommand.class.getResourceAsStream(TEMPLATES + name)) {
            if (in == null) {
                throw new IOException("template " + name + " is missing from the image");
            }
            return in.readAllBytes();
        }
    }

    /** {@return {@code my-tagger} as {@code MyTagger}} */
    static String className(String name) {
        StringBuilder b = new StringBuilder();
        for (String part : name.split("-")) {
            if (!part.isEmpty()) {
                b.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
            }
        }
        return b.toString();
    }

    /** {@return the SDK's version: that of the SPI POM in the image's {@code lib/sdk/}, else this module's} */
    static String spiVersion() {
        Optional<Path> sdk = Main.home().map(h -> h.resolve("lib/sdk"));
        if (sdk.isPresent() && Files.isDirectory(sdk.get())) {
            try (Stream<Path> s = Files.list(sdk.get())) {
                Optional<String> v = s.map(p -> p.getFileName().toString())
                        .filter(n -> n.matches(SdkCommand.ARTIFACT + "-[^-].*\\.pom"))
                        .map(n -> n.substring(SdkCommand.ARTIFACT.length() + 1, n.length() - ".pom".length()))
                        .findFirst();
                if (v.isPresent()) {
                    return v.get();
                }
            } catch (IOException e) {
                // fall back to the module version
            }
        }
        var d = NewCommand.class.getModule().getDescriptor();
        return d != null && d.rawVersion().isPresent() ? d.rawVersion().get() : "0.1.0-SNAPSHOT";
    }
}
