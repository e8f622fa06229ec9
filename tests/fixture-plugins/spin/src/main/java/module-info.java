/** Test fixture plugin: a stage that spins on the CPU, ignoring interrupts (issue 18, stuck stages). */
module com.example.fixture.spin {
    requires dev.openshell.middleware.spi;

    exports com.example.fixture.spin;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.spin.SpinProvider;
}
