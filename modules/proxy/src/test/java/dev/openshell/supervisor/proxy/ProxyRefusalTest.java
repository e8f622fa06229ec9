package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.proxy.internal.CertificateAuthority;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every refusal by one of the proxy's own rules reaches the audit step ({@link ExchangeRecord.Refused}) exactly once, with the rule, the
 * status and code the client got, a cause for upstream failures, and nothing of the request's content (issue 19,
 * item 1): network policy, SSRF, framing, upstream connect and TLS failures (a certificate for another host, an
 * untrusted CA, a refused connection), each told apart.
 */
class ProxyRefusalTest {
    @TempDir
    Path tmp;

    private static ProxyRefusal only(ProxyFixture fx) {
        assertEquals(1, fx.hook.refusals.size(), fx.hook.refusals.toString());
        return fx.hook.refusals.get(0);
    }

    /** CONNECT to {@code host}, TLS with the proxy's leaf, one GET to {@code port}: {@return the answer's text} */
    private static String viaInterception(ProxyFixture fx, String host, int port) throws Exception {
        String auth = host + ":" + port;
        String resp = Intercepted.exchange(fx, auth, "GET / HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
        assertTrue(resp.startsWith("HTTP/1.1 502 Bad Gateway"), resp);
        return resp;
    }

    @Test
    void aNetworkPolicyDenialIsReportedWithItsDestination() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp); RawClient c = fx.client()) {
            String auth = ProxyFixture.DENIED + ":" + fx.upstream.port();
            c.send("GET http://" + auth + "/private?token=SECRET HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            assertEquals(403, c.read().status());
            ProxyRefusal r = only(fx);
            assertEquals(ProxyRefusal.Kind.NETWORK_POLICY, r.kind());
            assertEquals("policy_denied", r.code());
            assertEquals(403, r.status());
            assertEquals(Optional.of("GET"), r.method());
            assertEquals(Optional.of(new ProxyRefusal.Destination("http", ProxyFixture.DENIED, fx.upstream.port())),
                    r.destination());
            assertFalse(r.toString().contains("SECRET"), "no path or query: " + r);
        }
    }

    @Test
    void anSsrfBlockIsReportedForARequestAndForAConnect() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp)) {
            try (RawClient c = fx.client()) {
                c.send("GET http://" + ProxyFixture.LAN + "/ HTTP/1.1\r\nHost: " + ProxyFixture.LAN + "\r\n\r\n");
                assertEquals(403, c.read().status());
            }
            try (RawClient c = fx.client()) {
                c.send("CONNECT " + ProxyFixture.LAN + ":443 HTTP/1.1\r\nHost: " + ProxyFixture.LAN + ":443\r\n\r\n");
                assertEquals(403, c.read().status());
            }
            assertEquals(List.of("ssrf_blocked", "ssrf_blocked"),
                    fx.hook.refusals.stream().map(ProxyRefusal::code).toList());
            assertEquals(List.of(Optional.of("GET"), Optional.of("CONNECT")),
                    fx.hook.refusals.stream().map(ProxyRefusal::method).toList());
            assertTrue(fx.hook.refusals.stream().allMatch(r -> r.kind() == ProxyRefusal.Kind.SSRF));
            assertEquals(0, fx.upstream.connections(), "nothing reached an upstream");
        }
    }

    @Test
    void aMalformedRequestIsReportedByTheRuleItBrokeNotByItsBytes() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp)) {
            for (String bad : List.of("GET http://" + fx.apiAuthority() + "/SECRET HTTP/1.1\r\nHost: "
                            + fx.apiAuthority() + "\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
                    "GET /SECRET HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n",
                    "GET http://" + fx.apiAuthority() + "/ HTTP/1.1\r\nX-SECRET : v\r\n\r\n")) {
                try (RawClient c = fx.client()) {
                    c.send(bad);
                    assertEquals(400, c.read().status(), bad);
                }
            }
            assertEquals(3, fx.hook.refusals.size(), fx.hook.refusals.toString());
            for (ProxyRefusal r : fx.hook.refusals) {
                assertEquals(ProxyRefusal.Kind.FRAMING, r.kind(), r.toString());
                assertEquals(400, r.status());
                assertFalse(r.toString().contains("SECRET"), "no request bytes: " + r);
            }
            assertEquals(0, fx.upstream.connections());
        }
    }

    @Test
    void upstreamTlsFailuresNameTheirRealCause() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp);
             // a certificate from a CA the proxy does not trust, for the right name
             TestUpstream untrusted = new TestUpstream(ProxyFixture.serverContext(CertificateAuthority.generate(),
                     ProxyFixture.API));
             // a certificate from the trusted CA, for another name
             TestUpstream otherName = new TestUpstream(ProxyFixture.serverContext(fx.upstreamCa,
                     "other.example.test"))) {
            String untrustedDetail = viaInterception(fx, ProxyFixture.API, untrusted.port());
            String mismatchDetail = viaInterception(fx, ProxyFixture.API, otherName.port());
            List<ProxyRefusal> refusals = fx.hook.refusals;
            assertEquals(2, refusals.size(), refusals.toString());
            assertEquals(Optional.of("untrusted_certificate"), refusals.get(0).cause());
            assertEquals(Optional.of("hostname_mismatch"), refusals.get(1).cause());
            assertTrue(refusals.stream().allMatch(r -> r.code().equals("upstream_tls_failed")
                    && r.kind() == ProxyRefusal.Kind.UPSTREAM && r.status() == 502));
            assertTrue(untrustedDetail.contains("not issued by a trusted CA")
                    && untrustedDetail.contains("upstream_ca_bundle"), untrustedDetail);
            assertTrue(mismatchDetail.contains("does not name the requested host"), mismatchDetail);
            assertFalse(mismatchDetail.contains("trusted"), "no wrong hint: " + mismatchDetail);
        }
    }

    @Test
    void aRefusedUpstreamConnectionIsToldApart() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            closed = s.getLocalPort();
        }
        try (ProxyFixture fx = new ProxyFixture(tmp); RawClient c = fx.client()) {
            String auth = ProxyFixture.API + ":" + closed;
            c.send("GET http://" + auth + "/ HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            RawClient.Response resp = c.read();
            assertEquals(502, resp.status());
            assertTrue(resp.bodyText().contains("refused the connection"), resp.bodyText());
            ProxyRefusal r = only(fx);
            assertEquals("upstream_failed", r.code());
            assertEquals(Optional.of("connection_refused"), r.cause());
        }
    }
}
