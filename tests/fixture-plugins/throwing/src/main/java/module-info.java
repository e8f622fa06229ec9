/** Test fixture plugin: its provider throws while describing itself. */
module com.example.fixture.throwing {
    requires dev.openshell.middleware.spi;

    exports com.example.fixture.throwing;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.throwing.ThrowingProvider;
}
