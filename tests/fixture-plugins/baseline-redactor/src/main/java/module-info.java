/** Test fixture plugin, compiled against the baseline SPI (tests/spi-baseline): redacts a configured word. */
module com.example.fixture.baseline {
    requires dev.openshell.middleware.spi;

    provides dev.openshell.middleware.spi.MiddlewareProvider
            with com.example.fixture.baseline.BaselineRedactorProvider;
}
