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

    private static final PolicySteps.Credentials<Void> INJECT = (plan, req, out) -> {
        if (out.rawQuery().contains("unknown")) {
            return new CredentialVerdict.Refuse(new Answer(403, "credential_unknown",
                    "credential 'X' is not declared"));
        }
        return new CredentialVerdict.Forward(out.headers().stream()
                .map(h -> h.name().equals("authorization") && h.value().equals("Bearer openshell:placeholder")
                        ? new HttpHeader("authorization", "Bearer real-secret") : h)
                .toList(), out.rawQuery().replace("key=openshell:placeholder", "key=real"));
    };

    @Test
    void credentialStepRewritesHeadersAndQueryAfterTheHookAndKeepsStreamedFraming() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = INJECT)) {
            try (RawClient c = fx.client()) {
                c.send("POST " + fx.apiUrl("/v1?key=openshell:placeholder") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                        + "\r\nAuthorization: Bearer openshell:placeholder\r\nContent-Length: 4\r\n\r\nbody");
                assertEquals(200, c.read().status());
                // nothing to inject: the original field lines go through byte for byte
                c.send("GET " + fx.apiUrl("/v2?a=1") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                        + "\r\nX-Case: Kept\r\n\r\n");
                assertEquals(200, c.read().status());
            }
            // rebuilt, the fields keep the client's spelling of their names (issue 19, item 10)
            assertEquals("POST /v1?key=real HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nAuthorization: Bearer real-secret\r\nContent-Length: 4\r\n\r\nbody",
                    fx.upstream.take().rawText());
            assertEquals("GET /v2?a=1 HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nX-Case: Kept\r\n\r\n",
                    fx.upstream.take().rawText());
            assertTrue(fx.hook.selected.get(0).headers()
                    .contains(new HttpHeader("authorization", "Bearer openshell:placeholder")),
                    "the hook runs before credentials are injected");
        }
    }

    @Test
    void credentialRefusalComesBeforeContinueAndNothingIsForwarded() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = INJECT)) {
            try (RawClient c = fx.client()) {
                c.send("POST " + fx.apiUrl("/v1?unknown=1") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                        + "\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
                RawClient.Response r = c.read();
                assertEquals(403, r.status(), "no 100 Continue before the refusal");
                assertEquals("{\"error\":\"credential_unknown\",\"detail\":\"credential 'X' is not declared\"}",
                        r.bodyText());
                assertTrue(c.closedByPeer());
            }
            assertEquals(0, fx.upstream.connections());
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
                assertEquals("{\"error\":\"ssrf_blocked\",\"detail\":\"the destination resolves to a loopback address; "
                        + "a local upstream needs allow_loopback_upstreams = true in the gateway's "
                        + "[openshell.supervisor.network] (see docs/operators.md#try-it-locally)\"}",
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
