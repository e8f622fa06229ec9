package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry of external services at {@code supervisor run} start-up (RFC 0009, "Registration and delivery"), with
 * in-test gRPC doubles: an unavailable service, a config the service refuses, duplicate binding IDs across services,
 * a claim in {@code openshell/}, and a registration allowing more than the binding accepts.
 */
class ExternalRegistryStartupIT {
    @TempDir
    Path dir;

    private Path gateway(Map<String, Integer> services, Map<String, Integer> maxBody) throws Exception {
        StringBuilder b = new StringBuilder("""
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "api.test" = "127.0.0.1"
                """);
        services.forEach((name, port) -> b.append("""

                [[openshell.supervisor.middleware]]
                name = "%s"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_body_bytes = %d
                timeout = "5s"
                allow_insecure = true
                """.formatted(name, port, maxBody.getOrDefault(name, 65536))));
        return Files.writeString(dir.resolve("gateway.toml"), b.toString());
    }

    private Path policy(int upstreamPort, String... bindings) throws Exception {
        StringBuilder b = new StringBuilder("""
                version: 1
                network_policies:
                  apis:
                    endpoints:
                      - { host: api.test, port: %d }
                network_middlewares:
                  secrets:
                    middleware: openshell/regex
                    order: 1
                    config: { mode: redact }
                    endpoints: { include: [api.test] }
                """.formatted(upstreamPort));
        int order = 10;
        for (String binding : bindings) {
            b.append("""
                      stage-%1$d:
                        middleware: %2$s
                        order: %1$d
                        endpoints: { include: [api.test] }
                    """.formatted(order++, binding));
        }
        return Files.writeString(dir.resolve("policy.yaml"), b.toString());
    }

    private Image.Run run(Path policy, Path gateway) throws Exception {
        return Image.run(Image.HOME, "run", "--policy", policy.toString(), "--gateway-config", gateway.toString(),
                "--listen", "127.0.0.1:0", "--admin-listen", "off", "--state-dir", dir.resolve("state").toString(),
                "--audit-log", dir.resolve("audit.jsonl").toString(), "--plugins",
                Files.createDirectories(dir.resolve("plugins")).toString());
    }

    @Test
    void anUnavailableServiceIsRefusedAndAPolicyThatNeedsItStopsStartUp() throws Exception {
        MiddlewareDouble gone = MiddlewareDouble.start("tests/gone");
        int port = gone.port();
        gone.close(); // nothing listens there any more
        Image.Run r = run(policy(9, "tests/gone"), gateway(Map.of("gone", port), Map.of()));
        assertEquals(1, r.exit(), r.err());
        assertEquals("", r.out(), "never ready");
        assertTrue(r.err().contains("service gone (external http://127.0.0.1:" + port + ")"), r.err());
        assertTrue(r.err().contains("network_middlewares.stage-10.middleware: no built-in, plugin or registered "
                + "middleware service provides binding 'tests/gone'"), r.err());
    }

    @Test
    void aConfigTheServiceRefusesStopsStartUpShowingTheServicesReasonMarkedAndCleaned() throws Exception {
        try (MiddlewareDouble picky = MiddlewareDouble.start("tests/picky")) {
            picky.refuseConfigs("UNTRUSTED-REASON \u001b[31m from\nthe service " + "x".repeat(1000));
            Path policy = policy(9, "tests/picky");
            Path gateway = gateway(Map.of("picky", picky.port()), Map.of());
            Image.Run r = run(policy, gateway);
            assertEquals(1, r.exit(), r.err());
            assertTrue(r.err().contains("network_middlewares.stage-10.config: rejected by binding 'tests/picky' of "
                    + "external service 'picky' (its reason is untrusted text, shown separately)"), r.err());
            String shown = r.err().lines().filter(l -> l.contains("UNTRUSTED-REASON")).findFirst()
                    .orElseThrow(() -> new AssertionError("the service's reason is shown to the operator: " + r.err()));
            assertTrue(shown.strip().startsWith("its provider's own words (untrusted text): UNTRUSTED-REASON [31m "
                    + "from the service xxx"), shown);
            assertFalse(shown.contains("\u001b"), "control characters removed: " + shown);
            assertTrue(shown.length() < 400 && shown.endsWith("..."), "length-limited: " + shown.length());
            assertFalse(Files.readString(dir.resolve("audit.jsonl")).contains("UNTRUSTED-REASON"),
                    "never in the audit log");

            Image.Run v = Image.run(Image.HOME, "validate", "--policy", policy.toString(), "--gateway-config",
                    gateway.toString(), "--plugins", Files.createDirectories(dir.resolve("plugins")).toString());
            assertEquals(1, v.exit(), v.out());
            assertTrue(v.out().contains("    its provider's own words (untrusted text): UNTRUSTED-REASON [31m from"),
                    v.out());
            assertEquals(2, picky.validations.size(), "run, then validate");
            assertEquals("tests/picky", picky.validations.get(0).getBindingId());
            assertEquals("picky", picky.validations.get(0).getMiddlewareName());
        }
    }

    @Test
    void refusedRegistrationsAreNamedAndTheSupervisorStartsWithTheOthers() throws Exception {
        List<MiddlewareDouble> doubles = new ArrayList<>();
        try (Upstream upstream = Upstream.start()) {
            Map<String, Integer> services = new LinkedHashMap<>();
            for (String[] s : List.of(new String[] {"dup-a", "tests/dup"}, new String[] {"dup-b", "tests/dup"},
                    new String[] {"squatter", "openshell/regex"}, new String[] {"ok", "tests/ok"})) {
                MiddlewareDouble d = MiddlewareDouble.start(s[1]);
                doubles.add(d);
                services.put(s[0], d.port());
            }
            MiddlewareDouble small = MiddlewareDouble.start("tests/small", 1024);
            doubles.add(small);
            services.put("small", small.port());

            try (StackProcess s = StackProcess.start(dir.resolve("supervisor"), policy(upstream.port(),
                    "tests/ok"), gateway(services, Map.of("small", 4096)), Map.of())) {
                String log = s.stderr();
                assertTrue(log.contains("duplicate binding ID 'tests/dup' claimed by service dup-a (external "
                        + "http://127.0.0.1:" + services.get("dup-a") + "), service dup-b (external http://127.0.0.1:"
                        + services.get("dup-b") + "); all claims refused"), log);
                assertTrue(log.contains("service squatter (external http://127.0.0.1:" + services.get("squatter")
                        + "): invalid manifest: binding ID 'openshell/regex' is in the reserved 'openshell/' "
                        + "namespace"), log);
                assertTrue(log.contains("service small (external http://127.0.0.1:" + small.port() + "): invalid "
                        + "manifest: binding 'tests/small' accepts at most 1024 bytes, less than the registration's "
                        + "max_body_bytes 4096 (lower max_body_bytes; it is never clamped)"), log);
                List<String> refused = s.auditDetails().stream()
                        .filter(d -> "registration_validation".equals(d.getString("change", ""))
                                && "registration refused".equals(d.getString("detail", "")))
                        .map(d -> d.getString("subject")).toList();
                assertEquals(4, refused.size(), refused.toString());
                assertTrue(s.auditDetails().stream().anyMatch(d -> "ok".equals(d.getString("subject", ""))
                        && "registration validated".equals(d.getString("detail", ""))));

                HttpResponse<String> r = s.postJson("http://api.test:" + upstream.port() + "/", "{\"k\":\""
                        + SupervisorPrivacyGuardIT.FAKE_KEY + "\"}");
                assertEquals(200, r.statusCode(), r.body());
                assertTrue(upstream.take().text().contains("[REDACTED:openai_api_key]"),
                        "openshell/regex stays the built-in's");
                MiddlewareDouble ok = doubles.get(3);
                assertEquals(1, ok.evaluations.size(), "the accepted service ran");
                assertTrue(doubles.get(2).evaluations.isEmpty(), "the squatter never ran");
            }
        } finally {
            doubles.forEach(MiddlewareDouble::close);
        }
    }
}
