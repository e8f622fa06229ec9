package dev.openshell.middleware.spi.host;

import dev.openshell.middleware.spi.MiddlewareProvider;

/**
 * A built-in that needs supervisor-only capabilities, such as {@code openshell/sigv4} in the post-credentials
 * phase. The engine binds capabilities only to providers whose module is in the boot layer and on the engine's list
 * of restricted built-ins; every other implementation is refused at load time.
 */
public interface RestrictedMiddlewareProvider extends MiddlewareProvider {
    /**
     * Receives the host capabilities. Called once, before the first evaluation.
     *
     * @param capabilities the capabilities; never {@code null}
     */
    void bind(HostCapabilities capabilities);
}
