package dev.openshell.supervisor.cli;

import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * {@code supervisor help [COMMAND [SUBCOMMAND...]]}: the help of the named command, following every word down the
 * command tree ({@code help ca export} is {@code ca export}'s help, not {@code ca}'s). Exit 0, or 2 for a name that
 * is not a command (with the closest names).
 */
@Command(name = "help", helpCommand = true,
        description = "Print the help of a command: 'supervisor help ca export' is 'supervisor ca export --help'.")
final class HelpCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "COMMAND", arity = "0..*", description = "The command, and its subcommands.")
    List<String> words = List.of();

    HelpCommand() {
    }

    @Override
    public Integer call() {
        CommandLine target = spec.parent().commandLine();
        for (String w : words) {
            CommandLine next = target.getSubcommands().get(w);
            if (next == null) {
                List<String> close = Main.suggestions(w, target.getSubcommands().keySet());
                target.getErr().println(target.getCommandSpec().qualifiedName() + ": unknown command '"
                        + ConsoleLogging.oneLine(w) + "'" + (close.isEmpty() ? ""
                                : "; did you mean " + String.join(" or ", close) + "?"));
                target.getErr().println("commands: " + String.join(", ", target.getSubcommands().keySet()));
                target.getErr().flush();
                return 2;
            }
            target = next;
        }
        target.usage(spec.commandLine().getOut());
        spec.commandLine().getOut().flush();
        return 0;
    }
}
