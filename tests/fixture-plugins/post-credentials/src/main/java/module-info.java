/** Test fixture plugin: asks for the built-in-only POST_CREDENTIALS phase. */
module com.example.fixture.postcreds {
    requires dev.openshell.middleware.spi;

    exports com.example.fixture.postcreds;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.postcreds.PostCredentialsProvider;
}
