package dev.openshell.supervisor.audit;

import java.util.List;
import java.util.Objects;

/**
 * The process behind a connection, as audit events carry it (OCSF {@code actor.process}): kernel facts about the
 * sandbox, never request content.
 *
 * @param pid the process ID
 * @param binary the executable's path
 * @param sha256 the lowercase hex SHA-256 of the executable
 * @param ancestors the ancestors' executable paths, nearest first
 * @param parentPid the parent's process ID, or 0 when no ancestor is known
 */
public record ProcessFacts(long pid, String binary, String sha256, List<String> ancestors, long parentPid) {
    /** @throws NullPointerException if a part is {@code null} */
    public ProcessFacts {
        Objects.requireNonNull(binary, "binary");
        Objects.requireNonNull(sha256, "sha256");
        ancestors = List.copyOf(ancestors);
    }
}
