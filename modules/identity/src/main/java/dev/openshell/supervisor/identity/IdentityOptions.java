package dev.openshell.supervisor.identity;

import java.nio.file.Path;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/**
 * How a {@link ProcessIdentifier} reads the host.
 *
 * @param procRoot where {@code /proc} is mounted; tests point it at a fake tree
 * @param entrypointPid the sandbox's entrypoint process, when known: its network namespace
 *     ({@code /proc/<pid>/net/tcp}) is searched instead of the supervisor's, its descendants are searched first, and
 *     the ancestor walk stops at it
 * @param excludedPids processes never searched for socket owners: the supervisor itself, whose many sockets are
 *     never a client's
 * @param maxTrustedBinaries how many distinct binary paths the trust-on-first-use store remembers; a new path beyond
 *     that is refused rather than trusted without memory. At least 1
 * @param maxBinaryBytes the largest executable that is hashed, in bytes; a larger one is refused. At least 1
 */
public record IdentityOptions(Path procRoot, OptionalLong entrypointPid, Set<Long> excludedPids,
                              int maxTrustedBinaries, long maxBinaryBytes) {
    /** Default {@link #maxTrustedBinaries()}: 16384 paths. */
    public static final int DEFAULT_MAX_TRUSTED_BINARIES = 16_384;
    /** Default {@link #maxBinaryBytes()}: 1 GiB. */
    public static final long DEFAULT_MAX_BINARY_BYTES = 1L << 30;

    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     * @throws IllegalArgumentException if a limit is below 1 or the entrypoint PID is below 1
     */
    public IdentityOptions {
        Objects.requireNonNull(procRoot, "procRoot");
        Objects.requireNonNull(entrypointPid, "entrypointPid");
        excludedPids = Set.copyOf(excludedPids);
        if (maxTrustedBinaries < 1 || maxBinaryBytes < 1) {
            throw new IllegalArgumentException("limits must be at least 1");
        }
        if (entrypointPid.isPresent() && entrypointPid.getAsLong() < 1) {
            throw new IllegalArgumentException("the entrypoint PID must be at least 1");
        }
    }

    /** {@return {@code /proc}, no entrypoint, nothing excluded, default limits} */
    public static IdentityOptions defaults() {
        return new IdentityOptions(Path.of("/proc"), OptionalLong.empty(), Set.of(), DEFAULT_MAX_TRUSTED_BINARIES,
                DEFAULT_MAX_BINARY_BYTES);
    }

    /**
     * {@return these options with another {@code /proc} root}
     *
     * @param root the root
     */
    public IdentityOptions withProcRoot(Path root) {
        return new IdentityOptions(root, entrypointPid, excludedPids, maxTrustedBinaries, maxBinaryBytes);
    }

    /**
     * {@return these options with an entrypoint process}
     *
     * @param pid the entrypoint's PID
     */
    public IdentityOptions withEntrypoint(long pid) {
        return new IdentityOptions(procRoot, OptionalLong.of(pid), excludedPids, maxTrustedBinaries, maxBinaryBytes);
    }

    /**
     * {@return these options with processes excluded from the owner search}
     *
     * @param pids the PIDs
     */
    public IdentityOptions withExcluded(Set<Long> pids) {
        return new IdentityOptions(procRoot, entrypointPid, pids, maxTrustedBinaries, maxBinaryBytes);
    }
}
