/** Test fixture plugin: declares a binding ID with an empty path segment. */
module com.example.fixture.badid {
    requires dev.openshell.middleware.spi;

    exports com.example.fixture.badid;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.badid.BadIdProvider;
}
