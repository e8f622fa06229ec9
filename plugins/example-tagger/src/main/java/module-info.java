/**
 * Example third-party middleware: tags requests with a header and a finding. It needs nothing but the SPI.
 */
module com.example.tagger {
    requires dev.openshell.middleware.spi;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.tagger.TaggerProvider;
}
