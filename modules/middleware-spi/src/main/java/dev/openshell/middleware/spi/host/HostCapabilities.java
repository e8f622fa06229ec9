package dev.openshell.middleware.spi.host;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.util.Objects;
import org.apiguardian.api.API;

/**
 * The supervisor-only capabilities handed to a restricted built-in by the engine, once, before its first evaluation.
 */
@API(status = INTERNAL, since = "0.1")
public final class HostCapabilities {
    private final CredentialAccess credentials;

    private HostCapabilities(CredentialAccess credentials) {
        this.credentials = credentials;
    }

    /**
     * {@return capabilities backed by the given services}
     *
     * @param credentials credential resolution; never {@code null}
     */
    public static HostCapabilities of(CredentialAccess credentials) {
        return new HostCapabilities(Objects.requireNonNull(credentials, "credentials"));
    }

    /** {@return credential resolution} */
    public CredentialAccess credentials() {
        return credentials;
    }
}
