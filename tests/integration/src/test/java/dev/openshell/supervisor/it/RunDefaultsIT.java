package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import jakarta.json.Json;
import java.io.IOException;
import java.io.StringReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code supervisor run} with no options (issue 5, item 6): 127.0.0.1:3128, the embedded default policy (every host
 * on ports 80 and 443, {@code openshell/regex} redacting), the admin listener on 127.0.0.1:9464, the CA in the default
 * state directory. The fixed ports may be taken on a shared machine: the test is then skipped, never failed.
 */
class RunDefaultsIT {
    @TempDir
    Path tmp;

    private static boolean free(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getByName("127.0.0.1"))) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static String error(String body) {
        return Json.createReader(new StringReader(body)).readObject().getString("error");
    }

    @Test
    void withNoOptionsItServesOn3128WithTheEmbeddedDefaultPolicy() throws Exception {
        assumeTrue(free(3128), "127.0.0.1:3128 is in use on this machine");
        assumeTrue(free(9464), "127.0.0.1:9464 (the default admin listener) is in use on this machine");
        Path home = Files.createDirectories(tmp.resolve("home"));
        SupervisorProcess supervisor;
        try {
            // no options; only the JVM's idea of the home directory moves, so the default state lands in tmp
            supervisor = SupervisorProcess.start(List.of(),
                    Map.of("SUPERVISOR_JAVA_OPTS", "-Duser.home=" + home));
        } catch (SupervisorProcess.StartFailure e) {
            if (e.stderr().contains("127.0.0.1:3128") || e.stderr().contains("127.0.0.1:9464")) {
                abort("a default port was taken between the check and the start: " + e.stderr());
            }
            throw e;
        }
        try (supervisor) {
            assertEquals(List.of("supervisor listening on 127.0.0.1:3128"), supervisor.stdout().lines().toList());
            // its openshell/regex config reads WebSocket messages, so it joins sessions: no warning an operator
            // could not act on
            assertFalse(supervisor.stderr().contains("will be refused"), supervisor.stderr());
            assertTrue(Files.isRegularFile(home.resolve(".openshell/supervisor/ca/supervisor-ca.pem")),
                    "the CA is generated in the default state directory");
            assertTrue(Files.isRegularFile(home.resolve(".openshell/supervisor/audit/audit.jsonl")),
                    "the audit log is in the default state directory");

            // the default policy: port 80 passes L4 (then loopback is refused by SSRF), port 8080 does not
            Curl.Result port80 = Curl.run("-x", "http://127.0.0.1:3128", "http://127.0.0.1:80/");
            assertEquals(403, port80.status(), port80.toString());
            assertEquals("ssrf_blocked", error(port80.body()));
            Curl.Result port8080 = Curl.run("-x", "http://127.0.0.1:3128", "http://127.0.0.1:8080/");
            assertEquals(403, port8080.status(), port8080.toString());
            assertEquals("policy_denied", error(port8080.body()));

            HttpClient admin = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            HttpResponse<String> ready = admin.send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:9464/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, ready.statusCode());
            assertEquals(143, supervisor.terminate(), "SIGTERM: a clean stop, the JVM status for the signal");
        }
        assertTrue(free(3128), "the proxy port is closed after SIGTERM");
        assertTrue(free(9464), "the admin port is closed after SIGTERM");
    }

    /**
     * Issue 5's "Done when" with the embedded default policy itself (no {@code --policy}): an {@code sk-...} key sent
     * with {@code curl -x} and with {@code HTTPS_PROXY} and {@code --cacert} reaches the upstream redacted. The default
     * policy allows only ports 80 and 443, so the loopback upstreams must listen there: skipped where they cannot.
     */
    @Test
    void theEmbeddedDefaultPolicyRedactsAKeySentWithCurlOverHttpAndHttps() throws Exception {
        String host = "api.default.test";
        LoopbackUpstreams upstreams = LoopbackUpstreams.create(tmp, host);
        RawUpstream http;
        RawUpstream https;
        try {
            http = RawUpstream.plain(80);
        } catch (IOException e) {
            abort("cannot listen on 127.0.0.1:80 here (" + e.getMessage() + ")");
            return;
        }
        try {
            https = RawUpstream.tls(upstreams.serverContext(), 443);
        } catch (IOException e) {
            http.close();
            abort("cannot listen on 127.0.0.1:443 here (" + e.getMessage() + ")");
            return;
        }
        Path gateway = Files.writeString(tmp.resolve("gateway.toml"), upstreams.gatewayToml());
        Path state = tmp.resolve("state");
        try (http; https; SupervisorProcess s = SupervisorProcess.start(List.of("--gateway-config",
                gateway.toString(), "--listen", "127.0.0.1:0", "--state-dir", state.toString(),
                "--admin-listen", "off"), Map.of())) {
            Curl.Result plain = Curl.run("-x", s.proxyUrl(), "--data-binary", ProxyEndToEndIT.CHAT,
                    "http://" + host + "/v1/chat/completions");
            assertEquals(200, plain.status(), plain.toString());
            assertEquals(ProxyEndToEndIT.CHAT_REDACTED, http.take().bodyText());

            Curl.Result tls = Curl.run(Map.of("HTTPS_PROXY", s.proxyUrl()), "--cacert",
                    state.resolve("ca/supervisor-ca.pem").toString(), "--data-binary", ProxyEndToEndIT.CHAT,
                    "https://" + host + "/v1/chat/completions");
            assertEquals(200, tls.status(), tls.toString());
            assertEquals(ProxyEndToEndIT.CHAT_REDACTED, https.take().bodyText());

            // a port the default policy does not list never reaches anything
            Curl.Result other = Curl.run("-x", s.proxyUrl(), "http://" + host + ":8080/");
            assertEquals(403, other.status(), other.toString());
            assertEquals("policy_denied", error(other.body()));
        }
    }
}
