/** Test fixture plugin: echoes {@code RequestContext.originatingProcess()} into a middleware header. */
module com.example.fixture.processecho {
    requires dev.openshell.middleware.spi;

    provides dev.openshell.middleware.spi.MiddlewareProvider
            with com.example.fixture.processecho.ProcessEchoProvider;
}
