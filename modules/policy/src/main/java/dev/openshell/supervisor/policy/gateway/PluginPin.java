package dev.openshell.supervisor.policy.gateway;

import java.util.Locale;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * {@code [[openshell.supervisor.plugin_pins]]}: one plugin the operator chose to run in the supervisor's process.
 *
 * <p>An in-process plugin runs with the supervisor's privileges, so a plugin loads only when an entry of the plugins
 * directory is pinned here with the SHA-256 of its exact bytes; an unpinned or changed entry is refused and reported
 * (see {@code PluginPins} in the engine for how a directory entry is digested). {@code supervisor plugins --pin}
 * prints the entries to paste.
 *
 * @param entry the name of the entry in the plugins directory (a {@code .jar} file or a directory), no path
 *     separator, not {@code .} or {@code ..}
 * @param sha256 the digest, 64 lowercase hexadecimal digits
 */
public record PluginPin(String entry, String sha256) {
    /** The digest's written form. */
    public static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if a component breaks the rules above
     */
    public PluginPin {
        String problem = entryProblem(Objects.requireNonNull(entry, "entry"));
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        sha256 = Objects.requireNonNull(sha256, "sha256").toLowerCase(Locale.ROOT);
        if (!SHA256.matcher(sha256).matches()) {
            throw new IllegalArgumentException("sha256 must be 64 hexadecimal digits");
        }
    }

    /**
     * {@return why {@code entry} cannot name an entry of the plugins directory, or {@code null}}
     *
     * @param entry a candidate name
     */
    static String entryProblem(String entry) {
        if (entry.isEmpty() || entry.equals(".") || entry.equals("..")) {
            return "entry must name a file or directory in the plugins directory";
        }
        if (entry.indexOf('/') >= 0 || entry.indexOf('\\') >= 0 || entry.indexOf('\0') >= 0) {
            return "entry is a name in the plugins directory, not a path (no '/')";
        }
        return null;
    }
}
