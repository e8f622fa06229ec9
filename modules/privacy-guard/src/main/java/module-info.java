/**
 * Privacy Guard, an example external middleware service for OpenShell RFC 0009 ("Use-case: Privacy Guard"): keeps
 * uploaded images and personal data in OpenAI chat-completions and Anthropic messages requests from reaching a cloud
 * model. It speaks {@code openshell.middleware.v1} over gRPC, served by Helidon WebServer's gRPC protocol, and binds
 * {@code examples/privacy-guard} at {@code HTTP_REQUEST/PRE_CREDENTIALS}.
 *
 * <p>It is written as an outside team would write one: it depends on the wire contract only, never on the supervisor's
 * SPI or engine.
 *
 * <p>JSON parsing goes through {@code jakarta.json}, whose provider (Parsson in the image) {@code jakarta.json} itself
 * finds with {@code ServiceLoader}.
 */
module dev.openshell.examples.privacyguard {
    requires dev.openshell.middleware.proto;
    requires io.helidon.webserver;
    requires io.helidon.webserver.grpc;
    requires io.helidon.common.tls;
    requires io.helidon.common.pki;
    requires io.helidon.common.configurable;
    requires jakarta.json;
    requires com.nimbusds.jose.jwt;
    requires java.net.http;

    exports dev.openshell.examples.privacyguard;
}
