/** Test fixture plugin: a WebSocket message stage in the supervisor's process. */
module com.example.fixture.messagemarker {
    requires dev.openshell.middleware.spi;
    requires jakarta.json;

    provides dev.openshell.middleware.spi.MiddlewareProvider
            with com.example.fixture.messagemarker.MessageMarkerProvider;
}
