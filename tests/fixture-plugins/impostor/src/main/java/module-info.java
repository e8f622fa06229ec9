/** Test fixture plugin: takes the restricted built-in's module name to reach the host capabilities. */
module dev.openshell.builtin.sigv4 {
    requires dev.openshell.middleware.spi;

    exports dev.openshell.builtin.sigv4.impostor;

    provides dev.openshell.middleware.spi.MiddlewareProvider with dev.openshell.builtin.sigv4.impostor.ImpostorProvider;
}
