/**
 * The middleware SPI: {@link dev.openshell.middleware.spi.MiddlewareProvider} and the immutable values that mirror
 * the {@code openshell.middleware.v1} contract of OpenShell RFC 0009 ("The middleware contract").
 *
 * <p>All collections handed out by these types are unmodifiable, and no accessor returns {@code null}.
 * Size limits are in bytes and are defined once, in {@link dev.openshell.middleware.spi.EnvelopeLimits}; the host
 * enforces them on every value that crosses the stage boundary, whether the stage runs in-process or over gRPC.
 */
package dev.openshell.middleware.spi;
