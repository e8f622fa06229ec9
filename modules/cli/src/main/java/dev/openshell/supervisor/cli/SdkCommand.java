package dev.openshell.supervisor.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor sdk}: what a plugin author needs to build a plugin from outside this repository. The image ships
 * the middleware SPI in {@code lib/sdk/}: {@code middleware-spi-VERSION.jar} and a standalone
 * {@code middleware-spi-VERSION.pom} (no parent; its dependencies, {@code jakarta.json-api} and
 * {@code apiguardian-api}, are on Maven Central), with {@code middleware-spi-VERSION-sources.jar} and
 * {@code middleware-spi-VERSION-javadoc.jar}. {@code install} copies them into a local Maven repository, in its layout
 * ({@code dev/openshell/supervisor/middleware-spi/VERSION/}), as {@code mvn install:install-file} would; Maven is not
 * needed for it.
 */
@Command(name = "sdk", description = "The plugin SDK: install the middleware SPI into a local Maven repository.",
        subcommands = SdkCommand.Install.class)
final class SdkCommand implements Callable<Integer> {
    /** The SPI's Maven coordinates, without the version. */
    static final String GROUP = "dev.openshell.supervisor";
    static final String ARTIFACT = "middleware-spi";

    @Spec
    CommandSpec spec;

    SdkCommand() {
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: install");
    }

    /**
     * {@code supervisor sdk install [--maven-repo DIR] [--sdk DIR]}: exit 0, or 1 when the JAR or POM is missing (the
     * sources and Javadoc JARs are copied when present).
     */
    @Command(name = "install", description = {
            "Install the middleware SPI (JAR, POM, sources and Javadoc, from the image's lib/sdk/) into a local Maven "
                    + "repository, so "
                    + "that a plugin builds against dev.openshell.supervisor:middleware-spi from anywhere.",
            "Equivalent: mvn install:install-file -Dfile=lib/sdk/middleware-spi-VERSION.jar "
                    + "-DpomFile=lib/sdk/middleware-spi-VERSION.pom -Dsources=... -Djavadoc=..."})
    static final class Install implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--maven-repo", paramLabel = "DIR",
                description = "The local Maven repository (default: ~/.m2/repository; Maven's -Dmaven.repo.local).")
        Path repo;

        @Option(names = "--sdk", paramLabel = "DIR", description = "Where the SDK files are (default: lib/sdk of the image).")
        Path sdk;

        Install() {
        }

        @Override
        public Integer call() {
            Optional<Path> dir = Optional.ofNullable(sdk).or(() -> Main.home().map(h -> h.resolve("lib/sdk")));
            if (dir.isEmpty() || !Files.isDirectory(dir.get())) {
                return fail("no SDK directory " + dir.map(Path::toString).orElse("(not run from the image: give --sdk)"));
            }
            List<Path> poms;
            try (Stream<Path> s = Files.list(dir.get())) {
                poms = s.filter(p -> p.getFileName().toString().matches(ARTIFACT + "-.+\\.pom")).sorted().toList();
            } catch (IOException e) {
                return fail("cannot read " + dir.get() + " (" + e.getClass().getSimpleName() + ")");
            }
            if (poms.size() != 1) {
                return fail(dir.get() + " holds " + poms.size() + " SPI POMs; expected one");
            }
            String name = poms.getFirst().getFileName().toString();
            String version = name.substring(ARTIFACT.length() + 1, name.length() - ".pom".length());
            Path jar = dir.get().resolve(ARTIFACT + "-" + version + ".jar");
            if (!Files.isRegularFile(jar)) {
                return fail("missing " + jar);
            }
            Path target = (repo != null ? repo : Path.of(System.getProperty("user.home"), ".m2", "repository"))
                    .resolve(GROUP.replace('.', '/')).resolve(ARTIFACT).resolve(version);
            try {
                Files.createDirectories(target);
                Files.copy(jar, target.resolve(jar.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                Files.copy(poms.getFirst(), target.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                for (String classifier : List.of("sources", "javadoc")) {
                    // optional: Maven and IDEs show the SPI's Javadoc from them
                    Path extra = dir.get().resolve(ARTIFACT + "-" + version + "-" + classifier + ".jar");
                    if (Files.isRegularFile(extra)) {
                        Files.copy(extra, target.resolve(extra.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            } catch (IOException e) {
                return fail("cannot write " + target + " (" + e.getClass().getSimpleName() + ": " + e.getMessage()
                        + ")");
            }
            spec.commandLine().getOut().println("installed " + GROUP + ":" + ARTIFACT + ":" + version + " into "
                    + target);
            spec.commandLine().getOut().println("depend on it with scope provided; see docs/plugin-authors.md");
            spec.commandLine().getOut().flush();
            return 0;
        }

        private int fail(String message) {
            spec.commandLine().getErr().println("supervisor sdk install: " + message);
            spec.commandLine().getErr().flush();
            return 1;
        }
    }
}
