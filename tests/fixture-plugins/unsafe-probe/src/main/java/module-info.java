/**
 * Test fixture plugin: tries {@code sun.misc.Unsafe} to open the supervisor's restricted host package to itself.
 */
module com.example.fixture.unsafeprobe {
    requires dev.openshell.middleware.spi;
    requires jdk.unsupported;

    provides dev.openshell.middleware.spi.MiddlewareProvider
            with com.example.fixture.unsafeprobe.UnsafeProbeProvider;
}
