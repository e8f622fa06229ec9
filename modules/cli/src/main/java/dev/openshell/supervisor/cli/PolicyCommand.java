package dev.openshell.supervisor.cli;

import dev.openshell.supervisor.runtime.Supervisor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor policy}: the sandbox policy to start from. {@code print-default} writes the embedded default
 * policy ({@code supervisor run} without {@code --policy}) to standard output or a new file.
 */
@Command(name = "policy", description = "Sandbox policy helpers: print the embedded default policy to start from.",
        subcommands = PolicyCommand.PrintDefault.class)
final class PolicyCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    PolicyCommand() {
    }

    @Override
    public Integer call() {
        throw new CommandLine.ParameterException(spec.commandLine(), "missing subcommand: print-default");
    }

    /** {@code supervisor policy print-default [--out FILE]}: exit 0, or 1 when the file cannot be written. */
    @Command(name = "print-default", description = {
            "Print the embedded default policy, the one 'supervisor run' enforces without --policy: every host on "
                    + "ports 80 and 443, and openshell/regex redacting known secret formats in every request "
                    + "body (fail_closed).",
            "Edit a copy and pass it with --policy; 'supervisor validate --policy FILE' checks it."})
    static final class PrintDefault implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = "--out", paramLabel = "FILE",
                description = "Write a new file instead of standard output (an existing file is not replaced).")
        Path out;

        PrintDefault() {
        }

        @Override
        public Integer call() {
            String text = Supervisor.defaultPolicyText();
            if (out == null) {
                spec.commandLine().getOut().print(text);
                spec.commandLine().getOut().flush();
                return 0;
            }
            try {
                if (Files.exists(out, LinkOption.NOFOLLOW_LINKS)) {
                    spec.commandLine().getErr().println("supervisor policy print-default: " + out
                            + " exists; it is not replaced");
                    return 1;
                }
                Files.writeString(out, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW);
            } catch (IOException e) {
                spec.commandLine().getErr().println("supervisor policy print-default: cannot write " + out + " ("
                        + e.getClass().getSimpleName() + ")");
                return 1;
            }
            spec.commandLine().getErr().println("wrote the default policy to " + out);
            return 0;
        }
    }
}
