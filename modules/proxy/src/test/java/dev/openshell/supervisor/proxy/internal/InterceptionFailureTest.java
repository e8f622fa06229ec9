package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.NetworkSettings;
import dev.openshell.supervisor.proxy.PolicySteps;
import io.helidon.webserver.WebServer;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** When a leaf certificate cannot be made, CONNECT fails closed before any 200. */
class InterceptionFailureTest {
    @Test
    void connectFailsClosedBefore200() throws Exception {
        CertificateAuthority ca = CertificateAuthority.generate();
        InterceptionTls broken = new InterceptionTls(ca, a -> {
            throw new GeneralSecurityException("no signer");
        });
        UpstreamPool pool = new UpstreamPool(UpstreamTls.create(Optional.empty()), Duration.ofSeconds(5),
                Duration.ofSeconds(5), Duration.ofSeconds(4));
        PolicySteps<Void> steps = PolicySteps.passThrough((h, p, c) -> AdmissionDecision.allow(EndpointFacts.of("all")));
        ProxyCore core = new ProxyCore(() -> steps, sequence -> true,
                new SsrfGuard(new NetworkSettings(true, Map.of("api.example.test", InetAddress.getByName("127.0.0.1"))),
                        n -> new InetAddress[0]),
                broken, pool, new ProxyCore.Timeouts(Duration.ofSeconds(5), Duration.ofSeconds(5),
                Duration.ofSeconds(4), Duration.ofSeconds(1)), new BodyBudget(Integer.MAX_VALUE, Duration.ZERO),
                ProxyCore.Limits.DEFAULT);
        WebServer server = WebServer.builder().host("127.0.0.1").port(0).shutdownHook(false)
                .addConnectionSelector(new ProxyConnectionSelector(core)).build().start();
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write("CONNECT api.example.test:443 HTTP/1.1\r\nHost: api.example.test:443\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            InputStream in = s.getInputStream();
            String all = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
            assertTrue(all.startsWith("HTTP/1.1 502 Bad Gateway\r\n"), all);
            assertTrue(all.endsWith("{\"error\":\"tls_interception_unavailable\","
                    + "\"detail\":\"TLS interception could not be set up\"}"), all);
            assertEquals(-1, all.indexOf(" 200 "));
        } finally {
            server.stop();
            pool.close();
            core.close();
        }
    }
}
