package dev.openshell.builtin.sigv4;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.middleware.spi.host.Secret;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SigV4ProviderTest {
    private static final BindingId ID = new BindingId(SigV4Provider.BINDING_ID);
    private static final Instant TIME = Instant.parse("2026-11-29T12:00:00Z");

    private static SigV4Provider provider(Map<String, String> creds) {
        SigV4Provider p = new SigV4Provider(Clock.fixed(TIME, ZoneOffset.UTC));
        p.bind(HostCapabilities.of((n, host) -> host.equals("s3.amazonaws.com")
                ? Optional.ofNullable(creds.get(n)).map(Secret::of) : Optional.empty()));
        return p;
    }

    private static OutboundRequest request(String host) {
        return new OutboundRequest(new HttpRequestTarget("https", host, 443, "PUT", "/bucket/key", "x-id=PutObject"),
                List.of(new HttpHeader("Content-Type", "text/plain")), Body.ofUtf8("hello"));
    }

    private static JsonObject config(String... kv) {
        var b = Json.createObjectBuilder();
        for (int i = 0; i < kv.length; i += 2) {
            b.add(kv[i], kv[i + 1]);
        }
        return b.build();
    }

    @Test
    void manifestIsOnePostCredentialsBinding() {
        var bindings = new SigV4Provider().manifest().bindings();
        assertEquals(1, bindings.size());
        assertEquals(Phase.POST_CREDENTIALS, bindings.get(0).phase());
        assertEquals(ID, bindings.get(0).id());
    }

    @Test
    void s3SendsTheContentHashAndSessionToken() {
        SigV4Provider p = provider(Map.of("AWS_ACCESS_KEY_ID", "AKID", "AWS_SECRET_ACCESS_KEY", "secret",
                "TOKEN", "session-token"));
        OutboundRequest out = p.evaluatePostCredentials(ID, config("region", "us-east-1", "service", "s3",
                "session_token", "TOKEN"), request("s3.amazonaws.com"));
        Map<String, String> h = new java.util.TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        out.headers().forEach(x -> h.put(x.name(), x.value()));
        assertEquals(SigV4Signer.sha256Hex("hello".getBytes()), h.get("x-amz-content-sha256"));
        assertEquals("session-token", h.get("x-amz-security-token"));
        assertEquals("s3.amazonaws.com", h.get("host"));
        assertTrue(h.get("authorization").startsWith("AWS4-HMAC-SHA256 Credential=AKID/20261129/us-east-1/s3/"
                + "aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;"
                + "x-amz-security-token, Signature="), h.get("authorization"));
    }

    @Test
    void unsignedPayload() {
        SigV4Provider p = provider(Map.of("AWS_ACCESS_KEY_ID", "AKID", "AWS_SECRET_ACCESS_KEY", "secret"));
        OutboundRequest out = p.evaluatePostCredentials(ID, config("region", "eu-west-1", "service", "s3",
                "payload", "unsigned"), request("s3.amazonaws.com"));
        assertTrue(out.headers().contains(new HttpHeader("X-Amz-Content-Sha256", SigV4Signer.UNSIGNED_PAYLOAD)));
    }

    @Test
    void aCredentialNotBoundToTheHostIsAStageFailureWithoutTheValue() {
        SigV4Provider p = provider(Map.of("AWS_ACCESS_KEY_ID", "AKID", "AWS_SECRET_ACCESS_KEY", "secret"));
        MiddlewareException e = assertThrows(MiddlewareException.class, () -> p.evaluatePostCredentials(ID,
                config("region", "us-east-1", "service", "s3"), request("evil.example.com")));
        assertEquals("credential_unavailable", e.code());
        assertEquals("credential 'AWS_ACCESS_KEY_ID' is not available for this host", e.getMessage());
    }

    @Test
    void withoutCapabilitiesItFailsClosed() {
        MiddlewareException e = assertThrows(MiddlewareException.class, () -> new SigV4Provider()
                .evaluatePostCredentials(ID, config("region", "r", "service", "s"), request("s3.amazonaws.com")));
        assertEquals("capabilities_unavailable", e.code());
    }

    @Test
    void thePreCredentialsEntryPointRefuses() {
        assertEquals("wrong_phase", assertThrows(MiddlewareException.class,
                () -> new SigV4Provider().evaluate(null)).code());
    }

    @Test
    void configValidation() {
        SigV4Provider p = new SigV4Provider();
        assertTrue(p.validateConfig(ID, config("region", "us-east-1", "service", "execute-api")).valid());
        assertEquals("'region' is required: 1 to 64 of a-z 0-9 -",
                p.validateConfig(ID, config("service", "s3")).reason());
        assertEquals("'payload' must be 'signed' or 'unsigned'",
                p.validateConfig(ID, config("region", "r", "service", "s", "payload", "maybe")).reason());
        assertFalse(p.validateConfig(ID, config("region", "r", "service", "s", "regoin", "x")).valid());
        assertEquals("'access_key_id' must name a credential ([A-Za-z_][A-Za-z0-9_]*)",
                p.validateConfig(ID, config("region", "r", "service", "s", "access_key_id", "AKIDREALVALUE/x"))
                        .reason());
    }
}
