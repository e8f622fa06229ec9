/**
 * Test fixture plugin: an ordinary third-party name, compiled with {@code --add-exports} to implement the restricted
 * {@code RestrictedMiddlewareProvider} and so be handed the host capabilities (credential access).
 */
module com.example.fixture.thief {
    requires dev.openshell.middleware.spi;

    exports com.example.fixture.thief;

    provides dev.openshell.middleware.spi.MiddlewareProvider with com.example.fixture.thief.ThiefProvider;
}
