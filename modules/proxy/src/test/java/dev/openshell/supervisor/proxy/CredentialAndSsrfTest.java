package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpHeader;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The credential step after the hook, and SSRF through a proxy that does not admit loopback. */
class CredentialAndSsrfTest {
    @TempDir
    Path tmp;

    @Test
    void credentialStepRewritesHeadersAfterTheHookAndKeepsStreamedFraming() throws Exception {
        CredentialInjection inject = (req, headers) -> headers.stream()
                .map(h -> h.name().equals("authorization") && h.value().equals("Bearer openshell:placeholder")
                        ? new HttpHeader("authorization", "Bearer real-secret") : h)
                .toList();
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.credentials(inject))) {
            try (RawClient c = fx.client()) {
                c.send("POST " + fx.apiUrl("/v1") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                        + "\r\nAuthorization: Bearer openshell:placeholder\r\nContent-Length: 4\r\n\r\nbody");
                assertEquals(200, c.read().status());
            }
            assertEquals("POST /v1 HTTP/1.1\r\nhost: " + fx.apiAuthority()
                    + "\r\nauthorization: Bearer real-secret\r\nContent-Length: 4\r\n\r\nbody",
                    fx.upstream.take().rawText());
            assertTrue(fx.hook.selected.get(0).headers()
                    .contains(new HttpHeader("authorization", "Bearer openshell:placeholder")),
                    "the hook runs before credentials are injected");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "2130706433", "0x7f.1", "127.1", "[::1]", "[::ffff:127.0.0.1]",
            "api.example.test"})
    void loopbackSpellingsAreBlockedWithoutTheDevelopmentSetting(String host) throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, false)) {
            String authority = host + ":" + fx.upstream.port();
            try (RawClient c = fx.client()) {
                c.send("GET http://" + authority + "/ HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
                RawClient.Response r = c.read();
                assertEquals(403, r.status());
                assertEquals("{\"error\":\"ssrf_blocked\",\"detail\":\"the destination resolves to a loopback address\"}",
                        r.bodyText());
            }
            try (RawClient c = fx.client()) {
                c.send("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
                assertEquals(403, c.read().status());
            }
            assertEquals(0, fx.upstream.connections());
            assertEquals(List.of(), fx.hook.selected);
        }
    }
}
