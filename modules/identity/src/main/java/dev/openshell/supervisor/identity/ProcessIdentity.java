package dev.openshell.supervisor.identity;

import dev.openshell.middleware.spi.OriginatingProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The process that holds the client end of a connection, as the kernel reports it (OpenShell's {@code exec} input:
 * path and ancestors).
 *
 * @param pid the process ID, in the supervisor's PID namespace
 * @param binary the executable's path as {@code readlink /proc/<pid>/exe} gives it: absolute, symlinks already
 *     resolved by the kernel; a trailing {@code " (deleted)"} is removed only when no file of that name exists
 * @param sha256 the lowercase hex SHA-256 of the running executable (trusted on first use, see
 *     {@link ProcessIdentifier})
 * @param ancestors the parent chain, nearest first: at most {@link ProcessIdentifier#MAX_ANCESTORS}, ending at the
 *     entrypoint process when one is configured, else at PID 1 or the first ancestor that cannot be read
 */
public record ProcessIdentity(long pid, String binary, String sha256, List<Ancestor> ancestors) {
    /**
     * One ancestor of the process.
     *
     * @param pid its process ID
     * @param binary its executable's path, as for {@link ProcessIdentity#binary()}
     * @param sha256 the lowercase hex SHA-256 of its executable
     */
    public record Ancestor(long pid, String binary, String sha256) {
        /** @throws NullPointerException if a part is {@code null} */
        public Ancestor {
            Objects.requireNonNull(binary, "binary");
            Objects.requireNonNull(sha256, "sha256");
        }
    }

    /** @throws NullPointerException if a part is {@code null} */
    public ProcessIdentity {
        Objects.requireNonNull(binary, "binary");
        Objects.requireNonNull(sha256, "sha256");
        ancestors = List.copyOf(ancestors);
    }

    /** {@return the executable's path, then each ancestor's, nearest first: the paths a policy's binaries match} */
    public List<String> binaries() {
        List<String> out = new ArrayList<>(ancestors.size() + 1);
        out.add(binary);
        ancestors.forEach(a -> out.add(a.binary()));
        return List.copyOf(out);
    }

    /** {@return the contract's view (RFC 0009 {@code Process}): binary, PID, ancestor binaries nearest first} */
    public OriginatingProcess toOriginatingProcess() {
        return new OriginatingProcess(binary, pid, ancestors.stream().map(Ancestor::binary).toList());
    }

    /**
     * {@return whether two owners of one socket run the same program: same binaries and hashes, same ancestry}
     * PIDs may differ (a forked process shares its parent's sockets).
     *
     * @param other another owner
     */
    boolean sameProgram(ProcessIdentity other) {
        if (!binary.equals(other.binary) || !sha256.equals(other.sha256)
                || ancestors.size() != other.ancestors.size()) {
            return false;
        }
        for (int i = 0; i < ancestors.size(); i++) {
            Ancestor a = ancestors.get(i);
            Ancestor b = other.ancestors.get(i);
            if (!a.binary().equals(b.binary()) || !a.sha256().equals(b.sha256())) {
                return false;
            }
        }
        return true;
    }
}
