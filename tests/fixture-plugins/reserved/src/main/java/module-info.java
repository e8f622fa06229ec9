/** Test fixture plugin: claims a binding in the reserved openshell/ namespace. */
module com.example.fixture.reserved {
    requires dev.openshell.middleware.spi;

    exports com.example.fixture.reserved;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.reserved.ReservedProvider;
}
