package dev.openshell.supervisor.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * Entry point of {@code bin/supervisor}. Exit codes: 0 success, 1 the command's check failed (for example a plugin
 * was refused, or a policy is invalid), 2 usage error.
 */
@Command(name = "supervisor", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "OpenShell supervisor: an egress proxy that runs RFC 0009 middleware chains.",
        subcommands = {RunCommand.class, ValidateCommand.class, ExplainCommand.class, CaCommand.class,
                DemoCommand.class, PluginsCommand.class, PrivacyGuardCommand.class, TckCommand.class,
                CommandLine.HelpCommand.class})
public final class Main {
    /** Creates the root command (called by picocli). */
    public Main() {
    }

    /**
     * Runs the command line and exits with its code.
     *
     * @param args the arguments
     */
    public static void main(String[] args) {
        configureLogging();
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * Runs the command line without exiting (for tests).
     *
     * @param args the arguments
     * @param out standard output
     * @param err standard error
     * @return the exit code
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new Main());
        cl.setOut(out);
        cl.setErr(err);
        return cl.execute(args);
    }

    /**
     * One line per log record: {@code 2026-11-29T21:37:02.123Z WARNING logger: message}. An operator's own
     * {@code java.util.logging.config.file} takes precedence.
     */
    static void configureLogging() {
        if (System.getProperty("java.util.logging.config.file") == null) {
            System.setProperty("java.util.logging.SimpleFormatter.format",
                    "%1$tFT%1$tT.%1$tLZ %4$s %3$s: %5$s%6$s%n");
        }
    }

    /**
     * Sets the level of a logger and keeps a strong reference so the setting survives garbage collection.
     *
     * @param name the logger name
     * @param level the level
     */
    static void logLevel(String name, java.util.logging.Level level) {
        java.util.logging.Logger l = java.util.logging.Logger.getLogger(name);
        l.setLevel(level);
        PINNED.add(l);
    }

    private static final java.util.List<java.util.logging.Logger> PINNED =
            java.util.Collections.synchronizedList(new java.util.ArrayList<>());

    /** {@return the image's home directory, from {@code -Dsupervisor.home} (set by {@code bin/supervisor})} */
    static Optional<Path> home() {
        return Optional.ofNullable(System.getProperty("supervisor.home")).map(Paths::get);
    }

    /** Reports the version from the module descriptor. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getModule().getDescriptor() == null ? "dev"
                    : Main.class.getModule().getDescriptor().rawVersion().orElse("dev");
            return new String[] {"supervisor " + v + " (Java " + Runtime.version() + ")"};
        }
    }
}
