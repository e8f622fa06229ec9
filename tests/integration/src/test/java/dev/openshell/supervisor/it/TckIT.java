package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.proto.v1.Decision;
import dev.openshell.middleware.proto.v1.HeaderMutation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.WriteHeader;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/supervisor tck} from the runtime image against {@code bin/supervisor privacy-guard} (plaintext and mutual
 * TLS), and against a deliberately broken service: the kit a service author runs, as they run it.
 */
class TckIT {
    @TempDir
    Path tmp;

    private Path config() throws Exception {
        return Files.writeString(tmp.resolve("privacy.json"), "{\"images\":\"redact\",\"pii\":\"redact\"}");
    }

    private static JsonObject json(Image.Run run) {
        return Json.createReader(new StringReader(run.out())).readObject();
    }

    /** {@return check name to status} */
    private static Map<String, String> statuses(JsonObject report) {
        Map<String, String> m = new TreeMap<>();
        report.getJsonArray("checks").getValuesAs(JsonObject.class)
                .forEach(c -> m.put(c.getString("name"), c.getString("status")));
        return m;
    }

    /**
     * Every check passes, but one may not: Helidon 4.5.0's HTTP/2 server closes the whole connection (GOAWAY,
     * PROTOCOL_ERROR) when a client's RST_STREAM reaches a stream it has just finished and forgotten, a violation of
     * RFC 9113 section 5.1 fixed after 4.5.0 (helidon-io/helidon#12143). Privacy Guard no longer answers cancelled
     * calls, and the kit aims its short deadline at the service's work, so this happens only when the cancellation
     * crosses a finished answer on the wire (about 1 run in 50 on a loaded machine); the next call on the connection
     * then fails with {@code service_error} (over TLS {@code service_unavailable}). The kit names that
     * ({@code deadline.recovers}, and {@code load} when two calls were in flight on the reset connection); only that
     * exact failure is tolerated here, and the run must then report itself failed (exit 1).
     */
    private static void assertAllPass(Image.Run run) {
        JsonObject report = json(run);
        Map<String, String> s = statuses(report);
        boolean goAway = false;
        for (String name : List.of("deadline.recovers", "load")) {
            boolean reset = "FAIL".equals(s.get(name)) && report.getJsonArray("checks")
                    .getValuesAs(JsonObject.class).stream().anyMatch(c -> c.getString("name").equals(name)
                            && (c.getString("reason").contains("service_error")
                            || c.getString("reason").contains("service_unavailable")));
            if (reset) {
                System.out.println("TckIT: Privacy Guard's server reset the connection (" + name + ")");
                s.put(name, "PASS");
                goAway = true;
            }
        }
        assertEquals(goAway ? 1 : 0, run.exit(), run.out() + run.err());
        assertEquals(!goAway, report.getBoolean("passed"), run.out());
        List<String> notPassed = new ArrayList<>();
        s.forEach((name, status) -> {
            if (!status.equals("PASS")) {
                notPassed.add(name + "=" + status);
            }
        });
        // Privacy Guard refuses unknown config keys, the kit's padding key too: the 64 KiB config is untested, and
        // the kit says so rather than pass
        assertEquals("SKIP", s.remove("evaluate.full_envelope"), run.out());
        notPassed.remove("evaluate.full_envelope=SKIP");
        // a WARN is a figure of this (shared, loaded) machine, never a defect of the service; a FAIL would be
        assertFalse(s.containsValue("FAIL") || s.containsValue("SKIP"), run.out());
        for (String name : List.of("describe.manifest", "validate_config.accepts",
                "validate_config.rejects_malformed", "evaluate.empty_body", "evaluate.json_2k", "evaluate.max_body",
                "evaluate.probe_email", "evaluate.probe_secret", "evaluate.probe_image",
                "evaluate.message_limit", "result.decision", "result.has_body",
                "result.header_mutations", "result.findings", "result.metadata", "result.reason_code",
                "deadline.recovers", "websocket.pre_credentials.preflight", "websocket.pre_credentials.messages",
                "websocket.pre_return.preflight", "websocket.pre_return.messages",
                // Helidon 4.5 may reset the HTTP/2 connection as a stream ends, failing the next stream once: the
                // adapter sends that preflight once more
                "websocket.pre_credentials.after_end", "websocket.pre_return.after_end")) {
            assertEquals("PASS", s.get(name), name + ": " + run.out());
        }
        assertEquals("examples/privacy-guard", report.getString("binding_id"));
        assertEquals(4194304, report.getInt("max_body_bytes"));
        if (!notPassed.isEmpty()) {
            System.out.println("TckIT: not PASS on this machine: " + notPassed);
        }
    }

    @Test
    void privacyGuardPassesOverPlaintext() throws Exception {
        try (PrivacyGuardProcess pg = PrivacyGuardProcess.start(0)) {
            Image.Run run = Image.run(Image.HOME, "tck", "--endpoint", "127.0.0.1:" + pg.port(), "--plaintext",
                    "--config", config().toString(), "--timeout", "5s", "--samples", "3", "--load", "2",
                    "--load-seconds", "1", "--format", "json");
            assertAllPass(run);
            assertEquals("plaintext", json(run).getString("transport"));
            assertTrue(statuses(json(run)).containsKey("load"), run.out());
        }
    }

    @Test
    void privacyGuardPassesOverMutualTlsAndAnAnonymousClientIsNamed() throws Exception {
        TestPki.Issued ca = TestPki.ca(tmp, "ca");
        TestPki.Issued server = TestPki.leaf(tmp, "server", ca);
        TestPki.Issued clientCa = TestPki.ca(tmp, "client-ca");
        TestPki.Issued supervisor = TestPki.leaf(tmp, "supervisor", clientCa);
        // the supervisor's extension token keys, exported for Privacy Guard, which then requires its tokens
        Path state = tmp.resolve("state");
        Path jwks = tmp.resolve("jwks.json");
        Image.Run export = Image.run(Image.HOME, "keys", "export", "--state-dir", state.toString(), "--out",
                jwks.toString());
        assertEquals(0, export.exit(), export.err());
        try (PrivacyGuardProcess pg = PrivacyGuardProcess.start(0, "--tls-cert", server.certFile().toString(),
                "--tls-key", server.keyFile().toString(), "--client-ca", clientCa.certFile().toString(),
                "--jwks", jwks.toString())) {
            String endpoint = "127.0.0.1:" + pg.port();
            Image.Run run = Image.run(Image.HOME, "tck", "--endpoint", endpoint, "--tls-ca", ca.certFile().toString(),
                    "--tls-cert", supervisor.certFile().toString(), "--tls-key", supervisor.keyFile().toString(),
                    "--config", config().toString(), "--timeout", "5s", "--samples", "3", "--format", "json",
                    "--name", "privacy-guard", "--state-dir", state.toString());
            assertAllPass(run);
            assertEquals("mtls", json(run).getString("transport"));
            Map<String, String> s = statuses(json(run));
            for (String name : List.of("auth.missing_token", "auth.expired_token", "auth.wrong_audience",
                    "auth.wrong_key", "auth.valid_token")) {
                assertEquals("PASS", s.get(name), name + ": " + run.out());
            }

            Image.Run anonymous = Image.run(Image.HOME, "tck", "--endpoint", endpoint, "--tls-ca",
                    ca.certFile().toString(), "--timeout", "2s", "--no-tokens");
            assertEquals(1, anonymous.exit(), anonymous.out() + anonymous.err());
            assertTrue(anonymous.out().contains("FAIL  describe.answer"), anonymous.out());
        }
    }

    @Test
    void aBrokenServiceIsNamedCheckByCheck() throws Exception {
        try (MiddlewareDouble broken = MiddlewareDouble.start("acme/broken", 64 * 1024)) {
            // accepts every config (the double's default), and writes outside x-openshell-middleware-*
            broken.answer(e -> new MiddlewareDouble.Reply.Result(HttpRequestResult.newBuilder()
                    .setDecision(Decision.DECISION_ALLOW).addHeaderMutations(HeaderMutation.newBuilder()
                            .setWrite(WriteHeader.newBuilder().setName("x-custom").setValue("1")
                                    .setOnExistingValue(2))).build()));
            Image.Run run = Image.run(Image.HOME, "tck", "--endpoint", "127.0.0.1:" + broken.port(), "--plaintext",
                    "--timeout", "5s", "--samples", "2");
            assertEquals(1, run.exit(), run.out() + run.err());
            for (String line : List.of("FAIL  validate_config.rejects_malformed", "FAIL  evaluate.json_2k",
                    "FAIL  result.header_mutations", "PASS  describe.manifest", "PASS  result.findings")) {
                assertTrue(run.out().contains(line), line + "\n" + run.out());
            }
            assertTrue(run.out().contains("header_mutation_write_namespace"), run.out());
            assertTrue(run.out().contains("FAILED"), run.out());
        }
    }
}
