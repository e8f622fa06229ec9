package dev.openshell.supervisor.identity;

/**
 * Where an identified process held the client socket when it was identified: what
 * {@link ProcessIdentifier#stillHolds} checks again, cheaply, at each later request on the connection
 * ({@code docs/policy-reference.md}, "Binary scoping": a borrowed connection).
 *
 * @param pid the process
 * @param startTime the process's start time ({@code /proc/<pid>/stat} field 22, clock ticks after boot), so that a
 *     process that later gets the same PID is not taken for it; {@code -1} when it could not be read
 * @param inode the socket's inode ({@code socket:[<inode>]})
 * @param fd the descriptor number the process held it under (looked at first; the process's other descriptors are
 *     read only when it moved)
 */
public record SocketHold(long pid, long startTime, long inode, int fd) {
    /** {@return the link text of the socket's descriptors, {@code socket:[<inode>]}} */
    String target() {
        return "socket:[" + inode + "]";
    }
}
