package dev.openshell.middleware.spi.host;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.util.Optional;
import org.apiguardian.api.API;

/**
 * Resolves credentials the gateway configuration declares, for one destination host. Supervisor-only: see the
 * package documentation.
 */
@API(status = INTERNAL, since = "0.1")
public interface CredentialAccess {
    /**
     * Resolves a credential for a host it is bound to.
     *
     * @param credentialName the declared credential name, for example {@code AWS_SECRET_ACCESS_KEY}
     * @param host the admitted destination host, lowercase
     * @return the value, or empty when no such credential exists or it is not bound to {@code host}
     */
    Optional<Secret> resolve(String credentialName, String host);

    /** {@return access that resolves nothing} */
    static CredentialAccess none() {
        return (name, host) -> Optional.empty();
    }
}
