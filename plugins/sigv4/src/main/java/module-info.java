/**
 * The restricted built-in {@code openshell/sigv4}: signs the final request with AWS Signature Version 4 in the
 * post-credentials phase, with credentials it obtains through the supervisor-only host capability
 * ({@code dev.openshell.middleware.spi.host}, exported to this module by name). Exports nothing.
 */
module dev.openshell.builtin.sigv4 {
    requires dev.openshell.middleware.spi;

    provides dev.openshell.middleware.spi.MiddlewareProvider with dev.openshell.builtin.sigv4.SigV4Provider;
}
