package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.audit.OcsfSchema;
import jakarta.json.JsonObject;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every refusal is visible to the operator (issue 19, item 1, "Done when"): a run of the image that gets one request of
 * each refusal kind (network policy, SSRF, framing, a limit, an upstream TLS failure, a credential) writes one OCSF
 * HTTP Activity event, Denied, per refusal, each valid against the OCSF schema, none carrying request content.
 */
class RefusalAuditIT {
    private static final String MARKER = "SECRET-MARKER-7f3a";
    private static final OcsfSchema SCHEMA = new OcsfSchema();

    @TempDir
    Path tmp;

    @Test
    void oneEventPerRefusalEachSchemaValidWithoutRequestContent() throws Exception {
        try (ProxyWorld world = ProxyWorld.create(tmp.resolve("world"))) {
            List<String> args = world.runArgs(true);
            Path gateway = Path.of(args.get(args.indexOf("--gateway-config") + 1));
            // a short head deadline (it also bounds the client's TLS handshake in a CONNECT tunnel, the leaf made for
            // the host included: 300 ms failed that handshake on a loaded machine, so 2 s); and the upstream test CA
            // left out, so the HTTPS upstream is untrusted
            String text = Files.readString(gateway).replaceAll("(?m)^upstream_ca_bundle = .*$", "");
            assertFalse(text.contains("upstream_ca_bundle"), text);
            Files.writeString(gateway, text + "\n[openshell.supervisor.limits]\nrequest_head_timeout_ms = 2000\n");
            int up = world.plain.port();
            try (SupervisorProcess supervisor = SupervisorProcess.start(args, Map.of())) {
                String proxy = supervisor.proxyUrl();
                // network policy
                Curl.Result denied = Curl.run("-x", proxy, "http://" + ProxyWorld.DENIED + ":" + up + "/" + MARKER);
                assertEquals(403, denied.status(), denied.toString());
                // SSRF: allowed by policy, resolves to the metadata address; nothing is connected to
                Curl.Result ssrf = Curl.run("-x", proxy, "http://" + ProxyWorld.METADATA + "/?q=" + MARKER);
                assertEquals(403, ssrf.status(), ssrf.toString());
                // framing: two different Content-Length fields
                String auth = ProxyWorld.PLAIN + ":" + up;
                RawClient.Response framing = RawClient.exchange(supervisor.host(), supervisor.port(),
                        "POST http://" + auth + "/" + MARKER + " HTTP/1.1\r\nHost: " + auth
                                + "\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx");
                assertEquals(400, framing.status(), framing.head());
                // a limit: a head that never ends meets the head deadline
                try (Socket s = new Socket(supervisor.host(), supervisor.port())) {
                    OutputStream out = s.getOutputStream();
                    out.write(("GET http://" + auth + "/" + MARKER + " HTTP/1.1\r\nHost: " + auth + "\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    InputStream in = s.getInputStream();
                    assertEquals(408, RawClient.read(in).status());
                }
                // upstream TLS: the HTTPS upstream's certificate is from a CA the supervisor does not trust
                Curl.Result tls = Curl.run(Map.of("HTTPS_PROXY", proxy), "--cacert", world.supervisorCa().toString(),
                        "https://" + ProxyWorld.PLAIN + ":" + world.tls.port() + "/" + MARKER);
                assertEquals(502, tls.status(), tls.toString());
                // a credential placeholder no credential declares
                Curl.Result credential = Curl.run("-x", proxy, "-H", "X-Note: " + MARKER, "-H",
                        "Authorization: Bearer openshell:resolve:env:UNDECLARED",
                        "http://" + ProxyWorld.PLAIN + ":" + up + "/");
                assertEquals(403, credential.status(), credential.toString());
                // a clean stop writes any pending aggregate before the log closes
                assertEquals(143, supervisor.terminate(), "SIGTERM: a clean stop, the JVM status for the signal");
            }
            String log = Files.readString(world.audit);
            assertFalse(log.contains(MARKER), "no request content in the audit log");
            List<JsonObject> refusals = new ArrayList<>();
            for (JsonObject e : AuditLog.read(world.audit)) {
                if (e.getInt("class_uid") == 4002 && AuditLog.openshell(e).containsKey("category")) {
                    SCHEMA.validate("http_activity", e);
                    assertEquals("Denied", e.getString("action"));
                    refusals.add(e);
                }
            }
            assertEquals(List.of("network_policy/policy_denied", "ssrf/ssrf_blocked", "framing/conflicting_content_length",
                            "limit/request_head_timeout", "upstream/upstream_tls_failed",
                            "credential/credential_unknown"),
                    refusals.stream().map(e -> AuditLog.openshell(e).getString("category") + "/"
                            + AuditLog.openshell(e).getString("code")).toList(), log);
            assertEquals("untrusted_certificate", AuditLog.openshell(refusals.get(4)).getString("cause"));
            assertTrue(refusals.get(4).getString("status_detail").contains("upstream_ca_bundle"), log);
            assertEquals(ProxyWorld.METADATA, refusals.get(1).getJsonObject("dst_endpoint").getString("hostname"));
            assertFalse(refusals.get(2).containsKey("dst_endpoint"), "a malformed request names no destination");
            assertTrue(refusals.stream().allMatch(e -> e.getJsonObject("src_endpoint").getString("ip")
                    .equals("127.0.0.1")), log);
            assertEquals(0, world.plain.connections(), "no refused request reached the upstream");
            assertEquals(1, world.tls.connections(), "only the TLS attempt reached the HTTPS upstream");
        }
    }
}
