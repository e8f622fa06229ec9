package dev.openshell.supervisor.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Entry point of {@code bin/supervisor}. Exit codes: 0 success (also {@code --help}, {@code -h} and {@code help} on
 * every command and subcommand), 1 the command's check failed (for example a plugin was refused, a policy is invalid,
 * or the proxy cannot listen), 2 usage error.
 *
 * <p>Every command and subcommand takes {@code -h}/{@code --help}, {@code -V}/{@code --version}, {@code --debug}
 * (log at FINE and print stack traces) and {@code --log-level=LEVEL} ({@link ConsoleLogging}). Help text is wrapped to
 * the terminal: {@code COLUMNS} when set (40 to 250), else the width picocli detects, else 80 columns.
 */
@Command(name = "supervisor", versionProvider = Main.Version.class,
        description = "OpenShell supervisor: an egress proxy that runs RFC 0009 middleware chains.")
public final class Main {
    /** Narrowest and widest help text, in columns. */
    static final int MIN_WIDTH = 40;
    static final int MAX_WIDTH = 250;

    /**
     * The commands, by name, in help order. A command line that names one of them (other than {@code help}) as its
     * first word gets only that one built: picocli builds the model of every command it is given, by reflection and
     * in its own old class files the AOT cache cannot hold, and for {@code supervisor run} that was a third of the
     * start-up time. Every other command line (help, a typo, options only) gets them all.
     */
    static final Map<String, java.util.function.Supplier<Object>> COMMANDS = commands();

    private static Map<String, java.util.function.Supplier<Object>> commands() {
        Map<String, java.util.function.Supplier<Object>> m = new java.util.LinkedHashMap<>();
        m.put("run", RunCommand::new);
        m.put("validate", ValidateCommand::new);
        m.put("explain", ExplainCommand::new);
        m.put("policy", PolicyCommand::new);
        m.put("ca", CaCommand::new);
        m.put("keys", KeysCommand::new);
        m.put("sdk", SdkCommand::new);
        m.put("new", NewCommand::new);
        m.put("demo", DemoCommand::new);
        m.put("plugins", PluginsCommand::new);
        m.put("privacy-guard", PrivacyGuardCommand::new);
        m.put("tck", TckCommand::new);
        m.put("help", HelpCommand::new);
        return java.util.Collections.unmodifiableMap(m);
    }

    /** Creates the root command (called by picocli). */
    public Main() {
    }

    /**
     * Runs the command line and exits with its code.
     *
     * @param args the arguments
     */
    public static void main(String[] args) {
        ConsoleLogging.install(System.getenv());
        if (args.length > 0 && args[0].equals("run")) {
            // the proxy's setting-free start-up work, beside the parsing of the command line and the policy
            dev.openshell.supervisor.proxy.SupervisorProxy.prepare();
        }
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
        return run(args, out, err, System.getenv());
    }

    /**
     * Runs the command line without exiting, with a given environment (for tests: {@code COLUMNS}).
     *
     * @param args the arguments
     * @param out standard output
     * @param err standard error
     * @param env the environment
     * @return the exit code
     */
    static int run(String[] args, PrintWriter out, PrintWriter err, Map<String, String> env) {
        CommandLine cl = commandLine(env, args.length > 0 && !args[0].equals("help") && COMMANDS.containsKey(args[0])
                ? List.of(args[0]) : COMMANDS.keySet());
        cl.setOut(out);
        cl.setErr(err);
        return cl.execute(args);
    }

    /** {@return the whole command tree, with the shared options on every command and the operator-facing handlers} */
    static CommandLine commandLine(Map<String, String> env) {
        return commandLine(env, COMMANDS.keySet());
    }

    /**
     * {@return the command tree with the given commands only, with the shared options on every command and the
     * operator-facing handlers}
     *
     * @param env the environment ({@code COLUMNS})
     * @param names names of {@link #COMMANDS}, in help order
     */
    static CommandLine commandLine(Map<String, String> env, java.util.Collection<String> names) {
        CommandLine cl = new CommandLine(new Main());
        for (String name : names) {
            cl.addSubcommand(name, new CommandLine(COMMANDS.get(name).get()));
        }
        decorate(cl);
        width(env).ifPresentOrElse(cl::setUsageHelpWidth, () -> cl.setUsageHelpAutoWidth(true));
        cl.setParameterExceptionHandler(Main::usageError);
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            PrintWriter err = cmd.getErr();
            err.println("supervisor " + cmd.getCommandName() + ": internal error: " + e.getClass().getSimpleName()
                    + (e.getMessage() == null ? "" : ": " + ConsoleLogging.oneLine(e.getMessage()))
                    + (ConsoleLogging.debug() ? "" : " (--debug prints the stack trace)"));
            if (ConsoleLogging.debug()) {
                e.printStackTrace(err);
            }
            err.flush();
            return 1;
        });
        return cl;
    }

    /** Adds the standard help options and the logging options to a command and all its subcommands. */
    private static void decorate(CommandLine cl) {
        CommandSpec spec = cl.getCommandSpec();
        spec.mixinStandardHelpOptions(true);
        if (!(cl.getCommand() instanceof HelpCommand)) {
            spec.addMixin("logging", CommandSpec.forAnnotatedObject(new ConsoleLogging.Options()));
        }
        for (CommandLine sub : cl.getSubcommands().values()) {
            decorate(sub);
        }
    }

    /** {@return the help width from {@code COLUMNS}, when set to a number in range} */
    static Optional<Integer> width(Map<String, String> env) {
        String c = env.get("COLUMNS");
        if (c == null || !c.matches("[0-9]{1,4}")) {
            return Optional.empty();
        }
        return Optional.of(Math.max(MIN_WIDTH, Math.min(MAX_WIDTH, Integer.parseInt(c))));
    }

    /**
     * A usage error: the message, then either suggestions (for an unknown command: only close names) or a pointer to
     * the command's help, never the whole help text. Exit 2.
     */
    private static int usageError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        PrintWriter err = cmd.getErr();
        String name = cmd.getCommandSpec().qualifiedName();
        if (e instanceof CommandLine.UnmatchedArgumentException u && !cmd.getSubcommands().isEmpty()
                && !u.getUnmatched().isEmpty() && !u.getUnmatched().getFirst().startsWith("-")) {
            String word = u.getUnmatched().getFirst();
            List<String> close = suggestions(word, cmd.getSubcommands().keySet());
            err.println(name + ": unknown command '" + ConsoleLogging.oneLine(word) + "'"
                    + (close.isEmpty() ? "" : "; did you mean " + String.join(" or ", close) + "?"));
            err.println("commands: " + String.join(", ", cmd.getSubcommands().keySet()) + " ('" + name
                    + " --help' describes them)");
        } else {
            err.println(name + ": " + ConsoleLogging.oneLine(e.getMessage()));
            if (e instanceof CommandLine.UnmatchedArgumentException u) {
                List<String> close = new ArrayList<>();
                for (String s : u.getSuggestions()) {
                    if (!u.getUnmatched().isEmpty() && distance(s, u.getUnmatched().getFirst())
                            <= Math.max(2, s.length() / 3)) {
                        close.add(s);
                    }
                }
                if (!close.isEmpty()) {
                    err.println("did you mean " + String.join(" or ", close) + "?");
                }
            }
            err.println("'" + name + " --help' lists the options");
        }
        err.flush();
        return 2;
    }

    /**
     * {@return the command names close to {@code word}: those it is a prefix of, else those within an edit distance
     * of a third of its length (at least 1), nearest first}
     *
     * @param word what was typed
     * @param names the command names
     */
    static List<String> suggestions(String word, java.util.Collection<String> names) {
        String w = word.toLowerCase(java.util.Locale.ROOT);
        List<String> prefixed = names.stream().filter(n -> w.length() >= 2 && n.startsWith(w)).sorted().toList();
        if (!prefixed.isEmpty()) {
            return prefixed;
        }
        int limit = Math.max(1, w.length() / 3);
        return names.stream().filter(n -> distance(n, w) <= limit)
                .sorted(Comparator.comparingInt((String n) -> distance(n, w)).thenComparing(n -> n)).toList();
    }

    /** {@return the Levenshtein distance of two strings} */
    static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int sub = prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                cur[j] = Math.min(sub, Math.min(prev[j] + 1, cur[j - 1] + 1));
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /**
     * Sets the level of a logger and keeps a strong reference so the setting survives garbage collection; a
     * {@code --debug} or {@code --log-level} setting wins over it (the operator asked to see more).
     *
     * @param name the logger name
     * @param level the level
     */
    static void logLevel(String name, java.util.logging.Level level) {
        if (ConsoleLogging.operatorChoseLevel()) {
            return;
        }
        java.util.logging.Logger l = java.util.logging.Logger.getLogger(name);
        l.setLevel(level);
        PINNED.add(l);
    }

    private static final List<java.util.logging.Logger> PINNED =
            java.util.Collections.synchronizedList(new ArrayList<>());

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
