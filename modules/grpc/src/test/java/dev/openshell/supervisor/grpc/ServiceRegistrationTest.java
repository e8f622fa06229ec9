package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ServiceRegistrationTest {
    private static String refused(ServiceRegistration.Builder b) {
        return assertThrows(IllegalArgumentException.class, b::build).getMessage();
    }

    @Test
    void plaintextIsRefusedWithoutAllowInsecure() {
        String msg = refused(ServiceRegistration.builder("anonymizer", URI.create("http://127.0.0.1:1234"), 1024));
        assertTrue(msg.contains("'anonymizer'") && msg.contains("allow_insecure = true"), msg);
        ServiceRegistration ok = ServiceRegistration.builder("anonymizer", URI.create("http://127.0.0.1:1234"), 1024)
                .allowInsecure(true).build();
        assertTrue(ok.plaintext());
        assertEquals(1234, ok.port());
    }

    @Test
    void httpsNeedsNoOptInAndDefaultsToPort443AndTheDefaultTimeout() {
        ServiceRegistration r = ServiceRegistration.builder("traces", URI.create("https://mw.example.internal"),
                1 << 20).build();
        assertFalse(r.plaintext());
        assertEquals(443, r.port());
        assertEquals("mw.example.internal", r.host());
        assertEquals(Duration.ofMillis(500), r.timeout());
        assertEquals("[::1]", URI.create("https://[::1]:8443").getHost());
        assertEquals("::1", ServiceRegistration.builder("v6", URI.create("https://[::1]:8443"), 0).build().host());
    }

    @ParameterizedTest
    @ValueSource(strings = {"ftp://h:1", "https:opaque", "https:///nohost", "https://u:p@h:1", "https://h:1/path",
            "https://h:1?q", "https://h:1#f", "h:1", "https://h:0"})
    void endpointsOtherThanSchemeHostAndPortAreRefused(String endpoint) {
        String msg = refused(ServiceRegistration.builder("svc", URI.create(endpoint), 0));
        assertTrue(msg.contains("grpc_endpoint"), msg);
    }

    @Test
    void limitsAndTimeoutsAreCheckedNeverClamped() {
        URI e = URI.create("https://h:1");
        assertTrue(refused(ServiceRegistration.builder("svc", e, (4L << 20) + 1)).contains("max_body_bytes"));
        assertTrue(refused(ServiceRegistration.builder("svc", e, -1)).contains("max_body_bytes"));
        assertTrue(refused(ServiceRegistration.builder("svc", e, 0).timeout(Duration.ofMillis(9)))
                .contains("timeout"));
        assertTrue(refused(ServiceRegistration.builder("svc", e, 0).timeout(Duration.ofSeconds(31)))
                .contains("timeout"));
        assertEquals(4L << 20, ServiceRegistration.builder("svc", e, 4L << 20).timeout(Duration.ofSeconds(30))
                .build().maxBodyBytes());
    }

    @Test
    void tlsSettingsBelongToHttpsAndMutualTlsNeedsCertificateAndKey() {
        assertTrue(refused(ServiceRegistration.builder("svc", URI.create("http://h:1"), 0).allowInsecure(true)
                .caBundle(Path.of("ca.pem"))).contains("plaintext"));
        assertThrows(IllegalArgumentException.class, () -> new ServiceRegistration.Tls(java.util.Optional.empty(),
                java.util.Optional.of(Path.of("c.pem")), java.util.Optional.empty()));
        ServiceRegistration r = ServiceRegistration.builder("svc", URI.create("https://h:1"), 0)
                .caBundle(Path.of("ca.pem")).clientCertificate(Path.of("c.pem"), Path.of("k.pem")).build();
        assertTrue(r.tls().mutual());
        assertTrue(r.toString().contains("mTLS") && !r.toString().contains("k.pem"), r.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "has space", "new\nline", "émoji", "semi;colon", "openshell/regex"})
    void namesOutsideTheBindingIdAlphabetAreRefused(String name) {
        assertThrows(IllegalArgumentException.class,
                () -> ServiceRegistration.builder(name, URI.create("https://h:1"), 0).build());
    }

    @Test
    void aNameLongerThan128CharactersIsRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> ServiceRegistration.builder("a".repeat(129), URI.create("https://h:1"), 0).build());
        assertEquals(128, ServiceRegistration.builder("a".repeat(128), URI.create("https://h:1"), 0).build().name()
                .length());
    }
}
