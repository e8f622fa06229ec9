/** Test fixture plugin: a response stage in the supervisor's process. */
module com.example.fixture.responsemarker {
    requires dev.openshell.middleware.spi;
    requires jakarta.json;

    provides dev.openshell.middleware.spi.MiddlewareProvider
            with com.example.fixture.responsemarker.ResponseMarkerProvider;
}
