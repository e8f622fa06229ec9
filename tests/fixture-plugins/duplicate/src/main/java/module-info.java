/** Test fixture plugin: claims examples/tagger, as the example plugin does. */
module com.example.fixture.duplicate {
    requires dev.openshell.middleware.spi;

    exports com.example.fixture.duplicate;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.duplicate.DuplicateProvider;
}
