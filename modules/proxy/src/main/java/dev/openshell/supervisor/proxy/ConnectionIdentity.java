package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.identity.Identification;
import java.util.Objects;
import java.util.Optional;

/**
 * What is known about the process behind one client connection: decided once per connection, by the policy steps
 * that need it ({@link ClientConnection#identity}), and read by binary-scoped admission, the middleware contract's
 * {@code originating_process} and the audit actor.
 *
 * @param identification the answer of process identification; empty when the supervisor does not identify
 *     processes (identity mode {@code endpoint-only}: every caller is unscoped)
 * @param process the process as binary-scoped policies judge it (binary and ancestors, unabridged), when identified
 * @param originatingProcess the contract's {@code originating_process}, fitted into the 4 KiB request context, when
 *     identified and it fits
 */
public record ConnectionIdentity(Optional<Identification> identification, Optional<OriginatingProcess> process,
                                 Optional<OriginatingProcess> originatingProcess) {
    /** The identity of every connection when processes are not identified ({@code endpoint-only}). */
    public static final ConnectionIdentity UNSCOPED = new ConnectionIdentity(Optional.empty(), Optional.empty(),
            Optional.empty());

    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     */
    public ConnectionIdentity {
        Objects.requireNonNull(identification, "identification");
        Objects.requireNonNull(process, "process");
        Objects.requireNonNull(originatingProcess, "originatingProcess");
    }

    /** {@return whether processes are identified at all (not {@code endpoint-only})} */
    public boolean scoped() {
        return identification.isPresent();
    }
}
