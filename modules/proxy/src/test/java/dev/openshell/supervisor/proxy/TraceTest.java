package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpHeader;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code TRACE} (RFC 9110 section 9.3.8) and {@code Max-Forwards} (section 7.6.2): answered 405 unless the endpoint
 * says {@code trace: allow}; then forwarded with Max-Forwards decremented, answered by the proxy at
 * {@code Max-Forwards: 0} without credential fields, and never with a credential injected.
 */
class TraceTest {
    @TempDir
    Path tmp;

    /** Injects "secret" for the placeholder in X-Key. */
    private static final PolicySteps.Credentials<Void> INJECT = (plan, req, out) -> {
        boolean used = out.headers().stream().anyMatch(h -> h.value().equals("PH"));
        return new CredentialVerdict.Forward(out.headers().stream()
                .map(h -> h.value().equals("PH") ? new HttpHeader(h.name(), "secret-value") : h).toList(),
                out.rawQuery(),
                used ? InjectedCredentials.of(List.of(new InjectedCredentials.Entry("K", "secret-value", "PH", false)))
                        : InjectedCredentials.none());
    };

    private ProxyFixture fixture(boolean traceAllowed) throws Exception {
        return ProxyFixture.withSteps(tmp, s -> {
            s.credentials = INJECT;
            s.admission = (h, p, client) -> AdmissionDecision.allow(
                    new EndpointFacts("test-policy", false, List.of(), Optional.empty(), false, traceAllowed));
        });
    }

    private static String trace(ProxyFixture fx, String extra) {
        return "TRACE " + fx.apiUrl("/t") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n" + extra + "\r\n";
    }

    @Test
    void withoutTheOptInTraceIsAnswered405AndNeverForwarded() throws Exception {
        try (ProxyFixture fx = fixture(false); RawClient c = fx.client()) {
            RawClient.Response r = c.send(trace(fx, "Max-Forwards: 5\r\n")).read();
            assertEquals(405, r.status());
            assertTrue(r.header("allow") != null);
            assertNull(fx.upstream.poll(), "nothing reached the upstream");
        }
    }

    @Test
    void anOptedInEndpointGetsTraceWithMaxForwardsDecrementedButNeverACredential() throws Exception {
        try (ProxyFixture fx = fixture(true); RawClient c = fx.client()) {
            assertEquals(200, c.send(trace(fx, "Max-Forwards: 3\r\n")).read().status());
            assertTrue(fx.upstream.take().rawText().toLowerCase().contains("\r\nmax-forwards: 2\r\n"), "decremented");

            RawClient.Response zero = c.send(trace(fx, "Max-Forwards: 0\r\nAuthorization: Bearer x\r\nX-A: 1\r\n"))
                    .read();
            assertEquals(200, zero.status(), "the proxy is the last recipient");
            assertEquals("message/http", zero.header("content-type"));
            assertTrue(zero.bodyText().startsWith("TRACE " + fx.apiUrl("/t") + " HTTP/1.1\r\n"), zero.bodyText());
            assertTrue(zero.bodyText().contains("X-A: 1\r\n"));
            assertFalse(zero.bodyText().contains("Authorization"), "credential fields are not reflected");

            RawClient.Response credential = c.send(trace(fx, "X-Key: PH\r\n")).read();
            assertEquals(403, credential.status());
            assertTrue(credential.bodyText().contains("credential_trace_not_allowed"), credential.bodyText());
            assertFalse(credential.bodyText().contains("secret-value"));
            assertEquals(200, c.send(trace(fx, "")).read().status(), "the connection stays usable");
            fx.upstream.take();
            assertNull(fx.upstream.poll(), "the credential-bearing TRACE never reached the upstream");
        }
    }
}
