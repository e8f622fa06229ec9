/** Test fixture plugin: requires a supervisor module other than the SPI (the policy module). */
module com.example.fixture.overreach {
    requires dev.openshell.middleware.spi;
    requires dev.openshell.supervisor.policy;

    exports com.example.fixture.overreach;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.overreach.OverreachProvider;
}
