package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;

/** An I/O failure on the upstream side of an exchange (as opposed to the client side). */
public final class UpstreamIOException extends IOException {
    private static final long serialVersionUID = 1L;

    /** @param cause the original failure */
    public UpstreamIOException(IOException cause) {
        super(cause.getClass().getSimpleName(), cause);
    }

    /** {@return whether the failure was in TLS (for example the upstream certificate did not verify)} */
    public boolean isTls() {
        return getCause() instanceof javax.net.ssl.SSLException;
    }
}
