package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import java.io.StringReader;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The SSRF rule end to end (issue 5, item 3): without {@code allow_loopback_upstreams}, a host the network policy
 * allows but that resolves to a loopback address is refused, whatever its spelling, and nothing reaches the upstream.
 */
class SsrfEndToEndIT {
    @TempDir
    Path tmp;

    private static String error(String body) {
        return Json.createReader(new StringReader(body)).readObject().getString("error");
    }

    @Test
    void aPolicyAllowedHostResolvingToLoopbackIsRefusedWithoutAllowLoopbackUpstreams() throws Exception {
        try (ProxyWorld world = ProxyWorld.create(tmp.resolve("world"));
             SupervisorProcess supervisor = world.start(false)) {
            int up = world.plain.port();
            // static_hosts maps the allowed name to 127.0.0.1
            Curl.Result named = Curl.run("-x", supervisor.proxyUrl(), "http://" + ProxyWorld.PLAIN + ":" + up + "/");
            assertEquals(403, named.status(), named.toString());
            assertEquals("ssrf_blocked", error(named.body()));

            // the policy allows 127.0.0.1 by name; the address is still refused, in every spelling
            for (String spelling : new String[] {"127.0.0.1", "2130706433", "0x7f.1", "0177.0.0.1", "127.1"}) {
                Curl.Result r = Curl.run("-x", supervisor.proxyUrl(), "--data-binary", "x",
                        "http://" + spelling + ":" + up + "/");
                assertEquals(403, r.status(), spelling + ": " + r);
                assertEquals("ssrf_blocked", error(r.body()), spelling);
            }

            // a middleware-selected host is refused before its chain runs; CONNECT is refused before 200
            Curl.Result redact = Curl.run("-x", supervisor.proxyUrl(), "--data-binary", ProxyEndToEndIT.CHAT,
                    "http://" + ProxyWorld.REDACT + ":" + up + "/v1/chat/completions");
            assertEquals(403, redact.status(), redact.toString());
            Curl.Result connect = Curl.run(Map.of("HTTPS_PROXY", supervisor.proxyUrl()), "--cacert",
                    world.supervisorCa().toString(), "https://" + ProxyWorld.REDACT + ":" + world.tls.port() + "/");
            assertEquals(56, connect.exit(), connect.toString());
            assertTrue(connect.err().contains("403"), connect.err());

            assertEquals(0, world.plain.connections(), "nothing connected to the upstream");
            assertEquals(0, world.tls.connections(), "nothing connected to the HTTPS upstream");
        }
    }
}
