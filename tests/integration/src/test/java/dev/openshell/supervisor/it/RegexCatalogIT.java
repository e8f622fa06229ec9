package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code openshell/regex} catalog and operator patterns (issue 37) through the runtime image: the embedded default
 * policy leaves a login form alone and redacts formats beyond the first seven; {@code custom_patterns} redact end to
 * end; {@code supervisor validate} refuses a malformed and a backtracking pattern with a located error.
 */
class RegexCatalogIT {
    @TempDir
    Path tmp;

    private static final String GITLAB = "glpat-Zk3Qw8Rt2Yx7Np4Lm9Vb";
    private static final String TWILIO = "9f2c4e6a8b0d1f3e5a7c9b2d4f6a8c0e";
    private static final String ACME = "acme_7f3a9c2e5b8d1f4a6c0e9b2d5f8a1c4e7b0d3f6a";

    private Path gateway(String host) throws IOException {
        return Files.writeString(tmp.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true
                [openshell.supervisor.network.static_hosts]
                "%s" = "127.0.0.1"
                """.formatted(host));
    }

    private static String randomPassword() {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        SecureRandom random = new SecureRandom();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 16; i++) {
            b.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return b.toString();
    }

    /**
     * The embedded default policy (no {@code --policy}) allows only ports 80 and 443, so the loopback upstream must
     * listen on 80: skipped where it cannot.
     */
    @Test
    void theDefaultPolicyPassesALoginFormAndRedactsTheCatalog() throws Exception {
        String host = "login.default.test";
        RawUpstream http;
        try {
            http = RawUpstream.plain(80);
        } catch (IOException e) {
            abort("cannot listen on 127.0.0.1:80 here (" + e.getMessage() + ")");
            return;
        }
        try (http; SupervisorProcess s = SupervisorProcess.start(List.of("--gateway-config",
                gateway(host).toString(), "--listen", "127.0.0.1:0", "--state-dir", tmp.resolve("state").toString(),
                "--admin-listen", "off"), Map.of())) {
            String form = "username=alice&password=" + randomPassword();
            Curl.Result login = Curl.run("-x", s.proxyUrl(), "-H", "Content-Type: application/x-www-form-urlencoded",
                    "--data-binary", form, "http://" + host + "/login");
            assertEquals(200, login.status(), login.toString());
            assertEquals(form, http.take().bodyText(), "a login form passes the default policy unchanged");

            String chat = "{\"messages\":[{\"role\":\"user\",\"content\":\"my .env:\\nGITLAB_TOKEN=" + GITLAB
                    + "\\ntwilio_auth_token = \\\"" + TWILIO + "\\\"\\n\"}]}";
            Curl.Result sent = Curl.run("-x", s.proxyUrl(), "-H", "Content-Type: application/json",
                    "--data-binary", chat, "http://" + host + "/v1/chat");
            assertEquals(200, sent.status(), sent.toString());
            assertEquals(chat.replace(GITLAB, "[REDACTED:gitlab_pat]").replace(TWILIO,
                    "[REDACTED:twilio_auth_token]"), http.take().bodyText());
        }
    }

    @Test
    void anOperatorPatternRedactsThroughTheImage() throws Exception {
        String host = "api.acme.test";
        try (RawUpstream http = RawUpstream.plain()) {
            Path policy = Files.writeString(tmp.resolve("policy.yaml"), """
                    version: 1
                    network_policies:
                      acme:
                        endpoints:
                          - { host: %s, port: %d }
                    network_middlewares:
                      secrets:
                        middleware: openshell/regex
                        order: 10
                        on_error: fail_closed
                        config:
                          mode: redact
                          custom_patterns:
                            - { id: acme_token, regex: 'acme_[0-9a-f]{40}' }
                        endpoints: { include: ["%s"] }
                    """.formatted(host, http.port(), host));
            try (SupervisorProcess s = SupervisorProcess.start(List.of("--policy", policy.toString(),
                    "--gateway-config", gateway(host).toString(), "--listen", "127.0.0.1:0", "--state-dir",
                    tmp.resolve("state").toString(), "--admin-listen", "off"), Map.of())) {
                String body = "{\"prompt\":\"deploy with " + ACME + " and AKIAIOSFODNN7EXAMPLE\"}";
                Curl.Result r = Curl.run("-x", s.proxyUrl(), "-H", "Content-Type: application/json",
                        "--data-binary", body, "http://" + host + ":" + http.port() + "/v1/run");
                assertEquals(200, r.status(), r.toString());
                assertEquals("{\"prompt\":\"deploy with [REDACTED:acme_token] and [REDACTED:aws_access_key_id]\"}",
                        http.take().bodyText());
            }
        }
    }

    @Test
    void validateRefusesAMalformedAndABacktrackingPatternWithALocatedError() throws Exception {
        Path policy = Files.writeString(tmp.resolve("bad.yaml"), """
                version: 1
                network_policies:
                  acme:
                    endpoints:
                      - { host: api.acme.test, port: 443 }
                network_middlewares:
                  backtracking:
                    middleware: openshell/regex
                    order: 10
                    config:
                      custom_patterns:
                        - { id: acme_pair, regex: '(acme_[0-9a-f]{8})-\\1' }
                    endpoints: { include: ["**"] }
                  malformed:
                    middleware: openshell/regex
                    order: 20
                    config:
                      custom_patterns:
                        - { id: acme_open, regex: 'acme_[0-9a-f' }
                    endpoints: { include: ["**"] }
                """);
        Image.Run r = Image.run(Image.HOME, "validate", "--policy", policy.toString(), "--format", "json");
        assertEquals(1, r.exit(), r.out() + r.err());
        List<JsonObject> problems = Json.createReader(new StringReader(r.out())).readObject()
                .getJsonArray("problems").getValuesAs(JsonObject.class).stream()
                .filter(p -> p.getString("severity").equals("error")).toList();
        assertEquals(2, problems.size(), r.out());
        JsonObject backtracking = problems.get(0);
        assertEquals(policy.toString(), backtracking.getString("file"));
        assertEquals(10, backtracking.getInt("line"));
        assertTrue(backtracking.getInt("column") > 0, r.out());
        assertEquals("network_middlewares.backtracking.config", backtracking.getString("key"));
        assertTrue(backtracking.getString("message").endsWith("openshell/regex: custom_patterns[0]: backreference "
                + "at char 20 needs backtracking"), r.out());
        JsonObject malformed = problems.get(1);
        assertEquals(17, malformed.getInt("line"));
        assertEquals("network_middlewares.malformed.config", malformed.getString("key"));
        assertTrue(malformed.getString("message").endsWith("openshell/regex: custom_patterns[0].regex: missing "
                + "closing ] at char 6"), r.out());
        assertFalse(r.out().contains("Exception"), r.out());
    }
}
