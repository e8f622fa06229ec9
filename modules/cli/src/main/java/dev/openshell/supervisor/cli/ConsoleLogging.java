package dev.openshell.supervisor.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Instant;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import picocli.CommandLine.Option;

/**
 * The console log of every command: one line per record on standard error,
 * {@code 2026-11-29T21:37:02.123Z WARNING logger: message}.
 *
 * <p>Without {@code --debug} (or a {@code --log-level}, or {@code SUPERVISOR_LOG_LEVEL}) the log stays readable: a
 * record's exception is reduced to its innermost cause on the same line (no stack trace), Helidon's feature banners
 * ({@code io.helidon.common.features}, including the "preview features" lines) are not shown, and Helidon's own
 * reports of a listener that failed to start are left out, since the supervisor reports that failure itself, in one
 * line naming the address and the cause. {@code --debug} logs at {@code FINE} and prints every stack trace;
 * {@code --log-level=LEVEL} (a {@link Level} name: SEVERE, WARNING, INFO, FINE, ...) sets the level only. An
 * operator's own {@code java.util.logging.config.file} replaces all of this.
 */
final class ConsoleLogging {
    /** Loggers whose INFO lines are Helidon's banners, hidden unless the operator asks for more. */
    static final Set<String> BANNERS = Set.of("io.helidon.common.features.HelidonFeatures",
            "io.helidon.common.features.HelidonFeatures.preview");

    private static volatile boolean debug;
    private static volatile boolean levelChosen;
    private static volatile boolean installed;
    private static final java.util.List<Logger> PINNED = new java.util.concurrent.CopyOnWriteArrayList<>();

    private ConsoleLogging() {
    }

    /** {@return whether {@code --debug} was given} */
    static boolean debug() {
        return debug;
    }

    /** {@return whether the operator chose a level ({@code --debug}, {@code --log-level} or the environment)} */
    static boolean operatorChoseLevel() {
        return levelChosen;
    }

    /**
     * Installs the console handler on the root logger, unless {@code java.util.logging.config.file} is set.
     *
     * @param env the environment: {@code SUPERVISOR_LOG_LEVEL} sets the level
     */
    static void install(Map<String, String> env) {
        if (System.getProperty("java.util.logging.config.file") != null) {
            return;
        }
        Logger root = LogManager.getLogManager().getLogger("");
        for (Handler h : root.getHandlers()) {
            root.removeHandler(h);
        }
        ConsoleHandler h = new ConsoleHandler();
        h.setLevel(Level.ALL);
        h.setFormatter(new LineFormatter());
        h.setFilter(ConsoleLogging::shown);
        root.addHandler(h);
        root.setLevel(Level.INFO);
        installed = true;
        for (String b : BANNERS) {
            pin(b, Level.WARNING);
        }
        String level = env.get("SUPERVISOR_LOG_LEVEL");
        if (level != null && !level.isBlank()) {
            try {
                level(Level.parse(level.trim().toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                Logger.getLogger(ConsoleLogging.class.getName()).warning("SUPERVISOR_LOG_LEVEL=" + oneLine(level)
                        + " is not a level (SEVERE, WARNING, INFO, FINE, FINER, FINEST, ALL, OFF); using INFO");
            }
        }
    }

    private static void pin(String name, Level level) {
        Logger l = Logger.getLogger(name);
        l.setLevel(level);
        PINNED.add(l);
    }

    /** Sets the root level and lifts the banner and per-command quieting (the operator wants to see more). */
    static void level(Level level) {
        levelChosen = true;
        if (!installed) {
            return;
        }
        LogManager.getLogManager().getLogger("").setLevel(level);
        for (Logger l : PINNED) {
            l.setLevel(null);
        }
    }

    private static boolean shown(LogRecord r) {
        if (debug || r.getLoggerName() == null) {
            return true;
        }
        // the supervisor reports a failed start itself, in one line with the address and the cause
        return !(r.getLoggerName().startsWith("io.helidon.webserver") && r.getLevel() == Level.SEVERE
                && r.getMessage() != null && (r.getMessage().startsWith("Failed to start listener")
                        || r.getMessage().contains("failed to start, shutting down")));
    }

    /** {@return {@code text} on one line: line breaks and other control characters become spaces} */
    static String oneLine(String text) {
        if (text == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(text.length());
        text.codePoints().forEach(c -> b.appendCodePoint(Character.isISOControl(c) ? ' ' : c));
        return b.toString();
    }

    /** The one-line format; the stack trace only with {@code --debug}. */
    static final class LineFormatter extends Formatter {
        @Override
        public String format(LogRecord r) {
            StringBuilder b = new StringBuilder(128);
            b.append(Instant.ofEpochMilli(r.getMillis())).append(' ').append(r.getLevel().getName()).append(' ')
                    .append(r.getLoggerName()).append(": ").append(formatMessage(r));
            Throwable t = r.getThrown();
            if (t != null) {
                if (debug) {
                    StringWriter w = new StringWriter();
                    t.printStackTrace(new PrintWriter(w));
                    b.append(System.lineSeparator()).append(w.toString().stripTrailing());
                } else {
                    Throwable root = t;
                    while (root.getCause() != null && root.getCause() != root) {
                        root = root.getCause();
                    }
                    b.append(" (").append(root.getClass().getSimpleName());
                    if (root.getMessage() != null) {
                        b.append(": ").append(oneLine(root.getMessage()));
                    }
                    b.append("; --debug prints the stack trace)");
                }
            }
            return b.append(System.lineSeparator()).toString();
        }
    }

    /** {@code --debug} and {@code --log-level}, on every command. */
    static final class Options {
        @Option(names = "--debug", description = "Log at FINE and print stack traces.")
        void debug(boolean on) {
            if (on) {
                debug = true;
                level(Level.FINE);
            }
        }

        @Option(names = "--log-level", paramLabel = "LEVEL",
                description = "Console log level: SEVERE, WARNING, INFO (default), FINE, FINER, FINEST.")
        void logLevel(String name) {
            if (name == null) {
                return;
            }
            try {
                level(Level.parse(name.toUpperCase(Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException("'" + oneLine(name) + "' is not a level "
                        + "(SEVERE, WARNING, INFO, FINE, FINER, FINEST, ALL, OFF)");
            }
        }
    }
}
