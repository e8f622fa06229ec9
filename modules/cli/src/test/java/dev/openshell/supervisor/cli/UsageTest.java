package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Help on every command, usage errors and suggestions, help wrapped to the terminal. */
class UsageTest {
    /** {@return the words of every command and subcommand, such as [ca, export]} */
    private static List<List<String>> everyCommand() {
        List<List<String>> all = new ArrayList<>();
        walk(Main.commandLine(Map.of()), new ArrayList<>(), all);
        return all;
    }

    private static void walk(CommandLine cl, List<String> path, List<List<String>> all) {
        all.add(List.copyOf(path));
        cl.getSubcommands().forEach((name, sub) -> {
            path.add(name);
            walk(sub, path, all);
            path.removeLast();
        });
    }

    private static Cli.Run run(Map<String, String> env, List<String> args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(args.toArray(String[]::new), new PrintWriter(out, true), new PrintWriter(err, true), env);
        return new Cli.Run(exit, out.toString(), err.toString());
    }

    @Test
    void everyCommandAndSubcommandTakesHelpAndDashHAndExitsZero() {
        List<List<String>> commands = everyCommand();
        assertTrue(commands.size() >= 12, commands.toString());
        for (List<String> words : commands) {
            for (String flag : new String[] {"--help", "-h"}) {
                List<String> args = new ArrayList<>(words);
                args.add(flag);
                Cli.Run r = run(Map.of(), args);
                assertEquals(0, r.exit(), args + "\n" + r);
                String name = String.join(" ", words);
                assertTrue(r.out().startsWith("Usage: supervisor" + (name.isEmpty() ? "" : " " + name)), args + "\n" + r);
                assertEquals("", r.err(), args + ": help complains of nothing (required options included)");
            }
        }
    }

    @Test
    void helpFollowsEveryWordDownTheTree() {
        for (List<String> words : everyCommand()) {
            List<String> args = new ArrayList<>(List.of("help"));
            args.addAll(words);
            Cli.Run viaHelp = run(Map.of(), args);
            List<String> direct = new ArrayList<>(words);
            direct.add("--help");
            assertEquals(0, viaHelp.exit(), args + "\n" + viaHelp);
            assertEquals(run(Map.of(), direct).out(), viaHelp.out(), args.toString());
        }
        Cli.Run bad = run(Map.of(), List.of("help", "ca", "exprot"));
        assertEquals(2, bad.exit());
        assertTrue(bad.err().contains("unknown command 'exprot'; did you mean export?"), bad.err());
    }

    @Test
    void unknownCommandsGetOnlyCloseSuggestions() {
        Cli.Run bogus = run(Map.of(), List.of("bogus"));
        assertEquals(2, bogus.exit());
        assertTrue(bogus.err().startsWith("supervisor: unknown command 'bogus'\n"), bogus.err());
        assertFalse(bogus.err().contains("did you mean"), bogus.err());
        assertTrue(bogus.err().contains("commands: run, validate, explain"), bogus.err());

        assertTrue(run(Map.of(), List.of("valdiate")).err().contains("did you mean validate?"));
        assertTrue(run(Map.of(), List.of("plugin")).err().contains("did you mean plugins?"));
        assertTrue(run(Map.of(), List.of("rn")).err().contains("did you mean run?"));
        assertEquals(List.of(), Main.suggestions("bogus", List.of("run", "privacy-guard", "policy", "plugins")));
        assertEquals(List.of("privacy-guard"), Main.suggestions("privacy", List.of("privacy-guard", "plugins")));
    }

    @Test
    void usageErrorsAreShortAndPointToHelp() {
        Cli.Run r = run(Map.of(), List.of("run", "--listne", "127.0.0.1:0"));
        assertEquals(2, r.exit());
        assertTrue(r.err().contains("did you mean --listen?"), r.err());
        assertTrue(r.err().lines().count() <= 3, "no full help text on a usage error:\n" + r.err());
        assertTrue(r.err().contains("'supervisor run --help' lists the options"), r.err());
    }

    @Test
    void helpIsWrappedToTheTerminalWidth() {
        for (int width : new int[] {60, 100, 160}) {
            for (List<String> words : everyCommand()) {
                List<String> args = new ArrayList<>(words);
                args.add("--help");
                Cli.Run r = run(Map.of("COLUMNS", String.valueOf(width)), args);
                r.out().lines().forEach(l -> assertTrue(l.length() <= width,
                        args + " at " + width + " columns: " + l.length() + ": " + l));
            }
        }
        String wide = run(Map.of("COLUMNS", "160"), List.of("run", "--help")).out();
        assertTrue(wide.lines().anyMatch(l -> l.length() > 100), "a wide terminal gets long lines:\n" + wide);
        // a paragraph is wrapped as one: no line ends a sentence fragment that the next one continues oddly
        assertTrue(wide.contains("With no options: 127.0.0.1:3128, the embedded default policy (all hosts on ports 80"
                + " and 443, openshell/regex"), wide);
    }

    @Test
    void theCommandTableNamesEachCommandAsItsAnnotationDoes() {
        for (var e : Main.COMMANDS.entrySet()) {
            CommandLine.Command c = e.getValue().get().getClass().getAnnotation(CommandLine.Command.class);
            assertEquals(e.getKey(), c.name(), "the table's name of " + c.name());
            assertEquals(0, c.aliases().length, e.getKey() + ": an alias would not select the command alone");
        }
    }

    @Test
    void aCommandLineThatNamesACommandBuildsThatOneOnlyAndBehavesTheSame() {
        CommandLine one = Main.commandLine(Map.of(), List.of("validate"));
        assertEquals(List.of("validate"), List.copyOf(one.getSubcommands().keySet()));
        // the same help and the same usage error as with the whole tree
        Cli.Run help = run(Map.of(), List.of("validate", "--help"));
        StringWriter whole = new StringWriter();
        Main.commandLine(Map.of()).getSubcommands().get("validate").usage(new PrintWriter(whole, true));
        assertEquals(whole.toString(), help.out());
        Cli.Run bad = run(Map.of(), List.of("validate", "--no-such-option"));
        assertEquals(2, bad.exit(), bad.toString());
        assertTrue(bad.err().startsWith("supervisor validate: "), bad.toString());
        // help and a mistyped command still see every command
        Cli.Run typo = run(Map.of(), List.of("valdate"));
        assertEquals(2, typo.exit(), typo.toString());
        assertTrue(typo.err().contains("did you mean validate?"), typo.toString());
    }
}
