package dev.openshell.supervisor.policy;

import java.util.Objects;
import java.util.Optional;

/**
 * One {@code binaries[].path} entry of a network policy: which executables the policy's endpoints are for
 * ({@code openshell-l7-semantics.md} section 4, "Matching").
 *
 * <p>An entry that contains {@code *} is a {@link Glob#path(String) path glob} ({@code /home/*}{@code /.local/bin/copilot} matches one
 * segment, {@code /opt/@github/**}{@code /copilot} any depth, {@code **}{@code /node} any prefix). Any other entry is
 * compared literally, character for character, even if it contains {@code ?} or {@code [}. A literal entry that is
 * a symbolic link when the policy is loaded is also compared with the file it resolves to ({@link #resolved()}), since
 * the kernel reports a process's executable with every link resolved ({@code /usr/bin/python3} admits a process
 * whose executable is {@code /usr/bin/python3.11}).
 *
 * <p>The paths compared are the executable of the process and of each of its ancestors: never command-line
 * arguments, so a script is admitted through the interpreter that runs it, never through its own path.
 *
 * @param source the entry as written
 * @param glob the glob, when the entry contains {@code *}
 * @param resolved the entry with every symbolic link resolved, when it is a literal path that was a link at load time
 */
public record BinaryPattern(String source, Optional<Glob> glob, Optional<String> resolved) {
    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     */
    public BinaryPattern {
        Objects.requireNonNull(source, "source");
        Objects.requireNonNull(glob, "glob");
        Objects.requireNonNull(resolved, "resolved");
    }

    /**
     * Parses an entry, without resolving links.
     *
     * @param source the entry
     * @return the pattern
     * @throws IllegalArgumentException if the entry is empty, is a relative literal path, or is a malformed glob
     */
    public static BinaryPattern parse(String source) {
        Objects.requireNonNull(source, "source");
        if (source.isEmpty()) {
            throw new IllegalArgumentException("a binary path must not be empty");
        }
        if (source.indexOf('*') >= 0) {
            try {
                return new BinaryPattern(source, Optional.of(Glob.path(source)), Optional.empty());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("invalid binary glob: " + e.getMessage(), e);
            }
        }
        if (!source.startsWith("/")) {
            throw new IllegalArgumentException("a binary path must be absolute, as the kernel reports executables"
                    + " (or a glob such as **/" + source + ")");
        }
        return new BinaryPattern(source, Optional.empty(), Optional.empty());
    }

    /**
     * {@return this entry, also matching {@code target}} For a glob, or when the target is the entry itself, this
     * entry unchanged.
     *
     * @param target the resolved path
     */
    public BinaryPattern withResolved(String target) {
        if (glob.isPresent() || target.equals(source)) {
            return this;
        }
        return new BinaryPattern(source, glob, Optional.of(target));
    }

    /** {@return whether the entry is a glob} */
    public boolean isGlob() {
        return glob.isPresent();
    }

    /**
     * {@return whether an executable's path matches this entry}
     *
     * @param binary an absolute executable path, as the kernel reports it
     */
    public boolean matches(String binary) {
        if (glob.isPresent()) {
            return glob.get().matches(binary);
        }
        return source.equals(binary) || resolved.map(binary::equals).orElse(false);
    }

    /** {@return the entry as written, with its resolved target when there is one} */
    @Override
    public String toString() {
        return resolved.map(r -> source + " (-> " + r + ")").orElse(source);
    }
}
