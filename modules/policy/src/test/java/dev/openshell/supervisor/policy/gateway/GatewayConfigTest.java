package dev.openshell.supervisor.policy.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SourceLocation;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The gateway configuration: registrations, aliases, supervisor settings, credentials, and every rule's message. */
class GatewayConfigTest {
    static final Path BASE = Path.of("/etc/supervisor");

    static Loaded<GatewayConfig> load(String toml) {
        return GatewayConfigLoader.parse("g.toml", toml, BASE);
    }

    static PolicyException rejected(String toml) {
        return assertThrows(PolicyException.class, () -> load(toml));
    }

    static ConfigProblem onlyError(String toml) {
        PolicyException e = rejected(toml);
        assertEquals(1, e.errors().size(), e::getMessage);
        return e.errors().get(0);
    }

    static void assertProblem(ConfigProblem p, String keyPath, int line, int column, String message) {
        assertEquals(message, p.message());
        assertEquals(keyPath, p.keyPath());
        assertEquals(new SourceLocation("g.toml", line, column), p.location(), p::describe);
    }

    /** One registration with {@code extra} lines after a valid https endpoint and body limit. */
    static String registration(String extra) {
        return "[[openshell.supervisor.middleware]]\nname = \"svc\"\ngrpc_endpoint = \"https://svc.internal:8443\"\n"
                + "max_body_bytes = 1048576\n" + extra;
    }

    @Test
    void theRfcExampleLoads() {
        Loaded<GatewayConfig> loaded = load("""
                [[openshell.supervisor.middleware]]
                name = "anonymizer"
                grpc_endpoint = "http://127.0.0.1:1234"
                max_body_bytes = 4194304
                timeout = "500ms"
                allow_insecure = true

                [[openshell.supervisor.middleware]]
                name = "agent-traces-exporter"
                grpc_endpoint = "https://middleware.example.internal:443"
                max_body_bytes = 1048576
                """);
        MiddlewareRegistration anonymizer = loaded.value().registration("anonymizer").orElseThrow();
        assertEquals(new GrpcEndpoint("http", "127.0.0.1", 1234), anonymizer.endpoint());
        assertEquals(4_194_304, anonymizer.maxBodyBytes());
        assertEquals(Duration.ofMillis(500), anonymizer.timeout());
        assertTrue(anonymizer.insecure());
        MiddlewareRegistration exporter = loaded.value().registration("agent-traces-exporter").orElseThrow();
        assertEquals(Duration.ofMillis(500), exporter.timeout(), "the default timeout");
        assertFalse(exporter.insecure());
        assertEquals(List.of(anonymizer), loaded.value().insecureRegistrations().castToList());
        ConfigProblem warning = loaded.warnings().getOnly();
        assertEquals("g.toml:3:1: warning: openshell.supervisor.middleware[0].grpc_endpoint: INSECURE: plaintext"
                + " endpoint 'http://127.0.0.1:1234' is allowed by allow_insecure = true; request content travels"
                + " unencrypted and unauthenticated, so use it only on a trusted local or isolated network (RFC 0009"
                + " phase 1 exception, removed in phase 2)", warning.describe());
    }

    @Test
    void thePublishedOpenShellSpellingsAreAliases() {
        Loaded<GatewayConfig> loaded = load("""
                [openshell]
                version = 1
                [openshell.gateway]
                name = "pi-admission"
                compute_drivers = ["docker"]
                [openshell.drivers.docker]
                supervisor_bin = "/opt/bin/openshell-sandbox"
                [[openshell.supervisor.middleware]]
                name = "pi-egress"
                grpc_endpoint = "https://10.0.0.5:50051"
                tls_ca_cert_path = "tls/ca.crt"
                audience = "urn:openshell:middleware:pi-egress"
                max_payload_bytes = 4194304
                timeout = "10s"
                [[openshell.supervisor.middleware]]
                name = "local"
                grpc_endpoint = "http://127.0.0.1:50052"
                max_payload_bytes = 65536
                allow_insecure_transport = true
                """);
        MiddlewareRegistration egress = loaded.value().middleware().get(0);
        assertEquals(Optional.of(Path.of("/etc/supervisor/tls/ca.crt")), egress.tlsCaBundle());
        assertEquals(4_194_304, egress.maxBodyBytes());
        assertEquals(Duration.ofSeconds(10), egress.timeout());
        assertEquals(Optional.of("urn:openshell:middleware:pi-egress"), egress.audience());
        assertTrue(loaded.value().middleware().get(1).allowInsecure());
        assertEquals(List.of("openshell.supervisor.middleware[1].grpc_endpoint"),
                loaded.warnings().collect(ConfigProblem::keyPath).castToList(), "the audience is used, not warned");
        assertTrue(loaded.warnings().get(0).message().contains("allowed by allow_insecure_transport = true"));
        assertEquals(load(registration("").replace("max_body_bytes", "max_payload_bytes")).value(),
                load(registration("")).value(), "an alias means exactly what the RFC key means");
    }

    @Test
    void bothSpellingsOfOneKeyAreAnError() {
        PolicyException e = rejected(registration("max_payload_bytes = 1048576\nallow_insecure = false\n"
                + "allow_insecure_transport = false\ntls_ca_bundle = \"a.pem\"\ntls_ca_cert_path = \"a.pem\"\n"));
        assertEquals(List.of(
                "g.toml:5:1: error: openshell.supervisor.middleware[0].max_payload_bytes: max_payload_bytes and"
                        + " max_body_bytes are two spellings of one setting; give only one",
                "g.toml:7:1: error: openshell.supervisor.middleware[0].allow_insecure_transport:"
                        + " allow_insecure_transport and allow_insecure are two spellings of one setting; give only"
                        + " one",
                "g.toml:9:1: error: openshell.supervisor.middleware[0].tls_ca_cert_path: tls_ca_cert_path and"
                        + " tls_ca_bundle are two spellings of one setting; give only one"),
                e.errors().collect(ConfigProblem::describe).castToList());
    }

    @Nested
    class Timeouts {
        @Test
        void integerWithMsOrSFrom10msTo30s() {
            assertEquals(Duration.ofMillis(10), load(registration("timeout = \"10ms\"")).value().middleware().get(0)
                    .timeout());
            assertEquals(Duration.ofSeconds(30), load(registration("timeout = \"30s\"")).value().middleware().get(0)
                    .timeout());
            for (String[] c : new String[][] {
                    {"9ms", "it must be from 10ms to 30s"},
                    {"30001ms", "it must be from 10ms to 30s"},
                    {"31s", "it must be from 10ms to 30s"},
                    {"500", "write an integer followed by ms or s, such as 500ms or 2s"},
                    {"1.5s", "write an integer followed by ms or s, such as 500ms or 2s"},
                    {" 500ms", "write an integer followed by ms or s, such as 500ms or 2s"},
                    {"+5s", "write an integer followed by ms or s, such as 500ms or 2s"},
                    {"5m", "write an integer followed by ms or s, such as 500ms or 2s"},
                    {"", "it is empty"}}) {
                assertProblem(onlyError(registration("timeout = \"" + c[0] + "\"")),
                        "openshell.supervisor.middleware[0].timeout", 5, 1,
                        "invalid timeout '" + c[0] + "': " + c[1]);
            }
            assertProblem(onlyError(registration("timeout = 500")), "openshell.supervisor.middleware[0].timeout", 5, 1,
                    "expected a string, found the number 500");
        }
    }

    @Nested
    class Limits {
        @Test
        void areOptionalRangeCheckedAndUnknownKeysRefused() {
            LimitsSettings none = load("[openshell.supervisor]\n").value().supervisor().limits();
            assertEquals(LimitsSettings.defaults(), none);
            LimitsSettings set = load("""
                    [openshell.supervisor.limits]
                    max_connections = 100
                    max_connections_per_client = 10
                    request_head_timeout_ms = 5000
                    body_buffer_timeout_ms = 7000
                    body_min_bytes_per_second = 0
                    body_buffer_client_share_percent = 50
                    stage_threads = 8
                    max_stuck_stages_per_binding = 3
                    max_concurrent_middleware_work = 4
                    max_queued_middleware_work = 0
                    max_connections_per_process = 16
                    """).value().supervisor().limits();
            assertEquals(4L, set.maxConcurrentMiddlewareWork().getAsLong());
            assertEquals(0L, set.maxQueuedMiddlewareWork().getAsLong());
            assertEquals(16L, set.maxConnectionsPerProcess().getAsLong());
            assertProblem(onlyError("[openshell.supervisor.limits]\nmax_concurrent_middleware_work = 0\n"),
                    "openshell.supervisor.limits.max_concurrent_middleware_work", 2, 1, "0 is outside 1..65536");
            assertEquals(7000L, set.bodyBufferTimeoutMillis().getAsLong());
            assertEquals(0L, set.bodyMinBytesPerSecond().getAsLong());
            assertEquals(50L, set.bodyBufferClientSharePercent().getAsLong());
            assertEquals(8L, set.stageThreads().getAsLong());
            assertEquals(3L, set.maxStuckStagesPerBinding().getAsLong());
            assertProblem(onlyError("[openshell.supervisor.limits]\nbody_buffer_client_share_percent = 0\n"),
                    "openshell.supervisor.limits.body_buffer_client_share_percent", 2, 1, "0 is outside 1..100");
            assertProblem(onlyError("[openshell.supervisor.limits]\nstage_threads = 5000\n"),
                    "openshell.supervisor.limits.stage_threads", 2, 1, "5000 is outside 1..4096");
            assertEquals(100L, set.maxConnections().getAsLong());
            assertEquals(10L, set.maxConnectionsPerClient().getAsLong());
            assertEquals(5000L, set.requestHeadTimeoutMillis().getAsLong());
            assertProblem(onlyError("[openshell.supervisor.limits]\nmax_connections = 0\n"),
                    "openshell.supervisor.limits.max_connections", 2, 1, "0 is outside 1..1000000");
            assertProblem(onlyError("[openshell.supervisor.limits]\nrequest_head_timeout_ms = \"30s\"\n"),
                    "openshell.supervisor.limits.request_head_timeout_ms", 2, 1,
                    "expected an integer, found the string '30s'");
            assertProblem(onlyError("[openshell.supervisor.limits]\nmax_conections = 5\n"),
                    "openshell.supervisor.limits.max_conections", 2, 1, "unknown key 'max_conections' (did you mean"
                            + " 'max_connections'?); allowed keys: max_connections, max_connections_per_client,"
                            + " request_head_timeout_ms, body_buffer_timeout_ms, body_min_bytes_per_second,"
                            + " body_buffer_client_share_percent, stage_threads, max_stuck_stages_per_binding,"
                            + " max_concurrent_middleware_work, max_queued_middleware_work,"
                            + " max_connections_per_process");
        }
    }

    @Nested
    class BodyBufferBudget {
        @Test
        void isOptionalAndRangeChecked() {
            assertTrue(load("[openshell.supervisor]\n").value().supervisor().bodyBufferBudgetBytes().isEmpty());
            assertEquals(268_435_456L, load("[openshell.supervisor]\nbody_buffer_budget_bytes = 268435456\n").value()
                    .supervisor().bodyBufferBudgetBytes().getAsLong());
            assertProblem(onlyError("[openshell.supervisor]\nbody_buffer_budget_bytes = 1048576\n"),
                    "openshell.supervisor.body_buffer_budget_bytes", 2, 1, "1048576 is outside 4194304..2147483647");
            assertProblem(onlyError("[openshell.supervisor]\nbody_buffer_budget_bytes = \"256MiB\"\n"),
                    "openshell.supervisor.body_buffer_budget_bytes", 2, 1,
                    "expected an integer, found the string '256MiB'");
        }
    }

    @Nested
    class BodyLimits {
        @Test
        void atMostTheFourMibPlatformMaximumNeverClamped() {
            String over = registration("").replace("1048576", "4194305");
            assertProblem(onlyError(over), "openshell.supervisor.middleware[0].max_body_bytes", 4, 1,
                    "max_body_bytes 4194305 exceeds the 4 MiB platform maximum (4194304 bytes); it is rejected, not"
                            + " clamped");
            assertProblem(onlyError(over.replace("max_body_bytes", "max_payload_bytes")),
                    "openshell.supervisor.middleware[0].max_payload_bytes", 4, 1, "max_payload_bytes 4194305 exceeds"
                            + " the 4 MiB platform maximum (4194304 bytes); it is rejected, not clamped");
            assertEquals(4_194_304, load(registration("").replace("1048576", "4194304")).value().middleware().get(0)
                    .maxBodyBytes());
            assertProblem(onlyError(registration("").replace("1048576", "-1")),
                    "openshell.supervisor.middleware[0].max_body_bytes", 4, 1, "max_body_bytes must not be negative");
            assertProblem(onlyError(registration("").replace("1048576", "\"1MiB\"")),
                    "openshell.supervisor.middleware[0].max_body_bytes", 4, 1,
                    "expected an integer, found the string '1MiB'");
        }

        @Test
        void isRequired() {
            assertProblem(onlyError(registration("").replace("max_body_bytes = 1048576\n", "")),
                    "openshell.supervisor.middleware[0]", 1, 1, "max_body_bytes is required: the largest request body,"
                            + " in bytes, sent to this service (at most 4194304)");
        }

        @Test
        void neverAboveWhatABindingAdvertises() {
            Loaded<GatewayConfig> loaded = load("\n" + registration(""));
            MiddlewareRegistration r = loaded.value().middleware().get(0);
            MiddlewareManifest manifest = new MiddlewareManifest("svc", "1.0", List.of(
                    MiddlewareBinding.httpRequest("acme/small", 65_536),
                    MiddlewareBinding.httpRequest("acme/large", 4_194_304)));
            ConfigProblem p = GatewayConfigLoader.checkManifest(loaded, r, manifest).getOnly();
            assertEquals("g.toml:5:1: error: openshell.supervisor.middleware[0].max_body_bytes: max_body_bytes 1048576"
                    + " exceeds the 65536 bytes that binding 'acme/small' of 'svc' accepts; it is rejected, not"
                    + " clamped: set at most 65536", p.describe());
            MiddlewareManifest fits = new MiddlewareManifest("svc", "1.0",
                    List.of(MiddlewareBinding.httpRequest("acme/large", 4_194_304)));
            assertTrue(GatewayConfigLoader.checkManifest(loaded, r, fits).isEmpty());
            MiddlewareRegistration stranger = load(registration("").replace("svc\"", "other\"")).value()
                    .middleware().get(0);
            assertThrows(IllegalArgumentException.class,
                    () -> GatewayConfigLoader.checkManifest(loaded, stranger, fits));
        }
    }

    @Nested
    class Transport {
        @Test
        void plaintextNeedsAllowInsecure() {
            String plain = registration("").replace("https://svc.internal:8443", "http://127.0.0.1:1234");
            assertProblem(onlyError(plain), "openshell.supervisor.middleware[0].grpc_endpoint", 3, 1,
                    "plaintext endpoint 'http://127.0.0.1:1234' needs allow_insecure = true: request content would"
                            + " travel unencrypted and unauthenticated (a research-preview exception for trusted"
                            + " local or isolated networks)");
            assertProblem(onlyError(plain + "allow_insecure = false\n"),
                    "openshell.supervisor.middleware[0].grpc_endpoint", 3, 1,
                    "plaintext endpoint 'http://127.0.0.1:1234' needs allow_insecure = true: request content would"
                            + " travel unencrypted and unauthenticated (a research-preview exception for trusted"
                            + " local or isolated networks)");
            MiddlewareRegistration r = load(plain + "allow_insecure = true\n").value().middleware().get(0);
            assertTrue(r.insecure());
            assertTrue(r.allowInsecure());
        }

        @Test
        void allowInsecureOnHttpsIsAWarning() {
            ConfigProblem w = load(registration("allow_insecure = true\n")).warnings().getOnly();
            assertEquals("openshell.supervisor.middleware[0].allow_insecure", w.keyPath());
            assertEquals("allow_insecure has no effect on an https:// endpoint", w.message());
        }

        @Test
        void tlsSettingsNeedHttpsAndComeInPairs() {
            String plain = registration("allow_insecure = true\ntls_ca_bundle = \"ca.pem\"\n")
                    .replace("https://svc.internal:8443", "http://127.0.0.1:1234");
            assertProblem(onlyError(plain), "openshell.supervisor.middleware[0].tls_ca_bundle", 6, 1,
                    "tls_ca_bundle applies only to https:// endpoints");
            assertProblem(onlyError(registration("tls_client_cert = \"client.pem\"\n")),
                    "openshell.supervisor.middleware[0]", 1, 1,
                    "tls_client_cert and tls_client_key must be given together");
            MiddlewareRegistration r = load(registration("tls_client_cert = \"client.pem\"\n"
                    + "tls_client_key = \"/keys/client.key\"\n")).value().middleware().get(0);
            assertTrue(r.mutualTls());
            assertEquals(Optional.of(Path.of("/etc/supervisor/client.pem")), r.tlsClientCert());
            assertEquals(Optional.of(Path.of("/keys/client.key")), r.tlsClientKey());
        }

        @Test
        void endpointsAreSchemeHostAndPortOnly() {
            for (String[] c : new String[][] {
                    {"grpc://svc:1", "write it as https://host:port (or http://host:port with allow_insecure = true)"},
                    {"svc.internal:443", "write it as https://host:port (or http://host:port with allow_insecure ="
                            + " true)"},
                    {"https://svc.internal:443/v1", "only scheme, host and port are allowed (no user, path, query or"
                            + " fragment)"},
                    {"https://user@svc.internal", "only scheme, host and port are allowed (no user, path, query or"
                            + " fragment)"},
                    {"https://svc.internal:99999", "the port must be a number from 1 to 65535"},
                    {"https://", "it is not a URL; write it as https://host:port"},
                    {"https://*.internal", "it has no host (or the host is not a valid DNS name or IP address)"}}) {
                assertProblem(onlyError(registration("").replace("https://svc.internal:8443", c[0])),
                        "openshell.supervisor.middleware[0].grpc_endpoint", 3, 1,
                        "invalid gRPC endpoint '" + c[0] + "': " + c[1]);
            }
            assertEquals(new GrpcEndpoint("https", "svc.internal", 443),
                    GrpcEndpoint.parse("HTTPS://SVC.internal"));
            assertEquals("https://[::1]:9000", GrpcEndpoint.parse("https://[::1]:9000").toString());
        }
    }

    @Test
    void unknownKeysInARegistrationAreErrors() {
        assertProblem(onlyError(registration("max_body_byte = 5\n")), "openshell.supervisor.middleware[0].max_body_byte",
                5, 1, "unknown key 'max_body_byte' (did you mean 'max_body_bytes'?); allowed keys: name,"
                        + " grpc_endpoint, max_body_bytes, timeout, allow_insecure, tls_ca_bundle, tls_client_cert,"
                        + " tls_client_key, audience, max_payload_bytes, allow_insecure_transport, tls_ca_cert_path");
    }

    @Test
    void registrationNamesAreRequiredPlainAndUnique() {
        assertProblem(onlyError(registration("").replace("name = \"svc\"\n", "")),
                "openshell.supervisor.middleware[0]", 1, 1,
                "name is required: the service's diagnostic name, such as \"anonymizer\"");
        assertProblem(onlyError(registration("").replace("\"svc\"", "\"my svc\"")),
                "openshell.supervisor.middleware[0].name", 2, 1,
                "name 'my svc' must be 1 to 128 letters, digits, '.', '_', '-' or '/', not starting with openshell/");
        assertProblem(onlyError(registration("") + registration("")), "openshell.supervisor.middleware[1].name", 6, 1,
                "name 'svc' is already used by openshell.supervisor.middleware[0]; names must be unique");
        assertProblem(onlyError(registration("").replace("grpc_endpoint = \"https://svc.internal:8443\"\n", "")),
                "openshell.supervisor.middleware[0]", 1, 1,
                "grpc_endpoint is required: the service's address, such as \"https://pii.internal:443\"");
    }

    /** OpenShell's rule (1 to 128 bytes of A-Z a-z 0-9 . _ - /, no openshell/ prefix), so its registrations load. */
    @Test
    void registrationNamesFollowOpenShellsRule() {
        String openShellName = "acme/pii-redactor." + "v".repeat(100);
        assertEquals(118, openShellName.length());
        assertTrue(load(registration("").replace("\"svc\"", "\"" + openShellName + "\"")).value()
                .registration(openShellName).isPresent());
        String longest = "n".repeat(128);
        assertTrue(load(registration("").replace("\"svc\"", "\"" + longest + "\"")).value()
                .registration(longest).isPresent());
        String rule = " must be 1 to 128 letters, digits, '.', '_', '-' or '/', not starting with openshell/";
        ConfigProblem tooLong = onlyError(registration("").replace("\"svc\"", "\"" + longest + "n\""));
        assertEquals("openshell.supervisor.middleware[0].name", tooLong.keyPath());
        assertTrue(tooLong.message().endsWith(rule), tooLong.message());
        assertProblem(onlyError(registration("").replace("\"svc\"", "\"openshell/regex\"")),
                "openshell.supervisor.middleware[0].name", 2, 1, "name 'openshell/regex'" + rule);
    }

    @Test
    void supervisorSettings() {
        GatewayConfig config = load("""
                [openshell.supervisor]
                listen = "0.0.0.0:8080"
                plugins_dir = "plugins"
                state_dir = "/var/lib/supervisor"
                audit_log = "../log/audit.jsonl"

                [openshell.supervisor.network]
                allow_loopback_upstreams = true
                [openshell.supervisor.network.static_hosts]
                "Upstream.test" = "127.0.0.1"
                "v6.test" = "::1"

                [openshell.supervisor.admin]
                listen = "[::1]:9464"

                [openshell.supervisor.tls]
                upstream_ca_bundle = "upstream-ca.pem"
                ca_cert = "ca/cert.pem"
                ca_key = "ca/key.pem"
                """).value();
        SupervisorSettings s = config.supervisor();
        assertEquals(new ListenAddress("0.0.0.0", 8080), s.listen());
        assertEquals(Optional.of(Path.of("/etc/supervisor/plugins")), s.pluginsDir());
        assertEquals(Optional.of(Path.of("/var/lib/supervisor")), s.stateDir());
        assertEquals(Optional.of(Path.of("/etc/log/audit.jsonl")), s.auditLog());
        assertTrue(s.network().allowLoopbackUpstreams());
        assertEquals(InetAddress.getLoopbackAddress(), s.network().staticHosts().get("upstream.test"));
        assertEquals(List.of("upstream.test", "v6.test"), s.network().staticHosts().keysView().toList());
        assertEquals("[::1]:9464", s.adminListen().orElseThrow().toString());
        assertEquals(Optional.of(Path.of("/etc/supervisor/ca/cert.pem")), s.tls().caCert());
        assertEquals(Optional.of(Path.of("/etc/supervisor/upstream-ca.pem")), s.tls().upstreamCaBundle());

        SupervisorSettings defaults = load("").value().supervisor();
        assertEquals(SupervisorSettings.defaults(), defaults);
        assertEquals("127.0.0.1:3128", defaults.listen().toString());
        assertFalse(defaults.network().allowLoopbackUpstreams());
        assertTrue(defaults.adminListen().isEmpty());
    }

    @Test
    void supervisorSettingErrors() {
        PolicyException e = rejected("""
                [openshell.supervisor]
                listen = "localhost"
                plugin_dir = "plugins"
                [openshell.supervisor.network]
                allow_loopback_upstreams = "yes"
                [openshell.supervisor.network.static_hosts]
                "*.test" = "127.0.0.1"
                "a.test" = "somewhere"
                [openshell.supervisor.tls]
                ca_cert = "ca.pem"
                """);
        assertEquals(List.of(
                "g.toml:2:1: error: openshell.supervisor.listen: invalid listen address 'localhost': write it as"
                        + " host:port, with an IPv6 host in brackets ([::1]:3128)",
                "g.toml:3:1: error: openshell.supervisor.plugin_dir: unknown key 'plugin_dir' (did you mean"
                        + " 'plugins_dir'?); allowed keys: listen, plugins_dir, state_dir, audit_log, body_buffer_budget_bytes, limits, network,"
                        + " admin, tls, identity, middleware, credentials, plugin_pins, extension_auth",
                "g.toml:5:1: error: openshell.supervisor.network.allow_loopback_upstreams: expected true or false,"
                        + " found the string 'yes'",
                "g.toml:7:1: error: openshell.supervisor.network.static_hosts.\"*.test\": static host name '*.test' is"
                        + " not a valid host name (wildcards are not allowed)",
                "g.toml:8:1: error: openshell.supervisor.network.static_hosts.\"a.test\": 'somewhere' is not an IPv4"
                        + " or IPv6 address",
                "g.toml:9:1: error: openshell.supervisor.tls: ca_cert and ca_key must be given together"),
                e.errors().collect(ConfigProblem::describe).castToList());
    }

    @Test
    void identitySettings() {
        assertEquals(IdentitySettings.defaults(), load("").value().supervisor().identity());
        assertTrue(load("").value().supervisor().identity().enforced(), "binary scoping is on by default");
        IdentitySettings off = load("""
                [openshell.supervisor.identity]
                mode = "endpoint-only"
                entrypoint_pid = 4242
                """).value().supervisor().identity();
        assertEquals(IdentitySettings.Mode.ENDPOINT_ONLY, off.mode());
        assertFalse(off.enforced());
        assertEquals(java.util.OptionalLong.of(4242), off.entrypointPid());
        assertProblem(onlyError("""
                [openshell.supervisor.identity]
                mode = "relaxed"
                """), "openshell.supervisor.identity.mode", 2, 1,
                "unknown identity mode 'relaxed'; expected enforce or endpoint-only");
        assertProblem(onlyError("""
                [openshell.supervisor.identity]
                entrypoint_pid = 0
                """), "openshell.supervisor.identity.entrypoint_pid", 2, 1, "0 is outside 1..4194304");
        assertEquals("unknown key 'mod' (did you mean 'mode'?); allowed keys: mode, entrypoint_pid", onlyError("""
                [openshell.supervisor.identity]
                mod = "enforce"
                """).message());
    }

    @Test
    void unknownTablesOutsideOpenShellAreErrors() {
        assertProblem(onlyError("[opnshell.supervisor]\nlisten = \"127.0.0.1:1\"\n"), "opnshell", 1, 1,
                "unknown key 'opnshell' (did you mean 'openshell'?); allowed keys: openshell");
        assertProblem(onlyError("[openshell.supervisr]\n"), "openshell.supervisr", 1, 1,
                "unknown key 'supervisr' (did you mean 'supervisor'?); allowed keys: version, gateway, supervisor,"
                        + " drivers, credential_drivers");
        assertProblem(onlyError("[openshell]\nversion = 2\n"), "openshell.version", 2, 1,
                "unsupported configuration version 2; this supervisor reads version 1");
        assertProblem(onlyError("[openshell]\nsupervisor = 3\n"), "openshell.supervisor", 2, 1,
                "expected a table, found the number 3");
    }

    @Test
    void credentials() {
        GatewayConfig config = load("""
                [[openshell.supervisor.credentials]]
                name = "github"
                source = "env:GITHUB_TOKEN"
                hosts = ["api.github.com", "*.githubusercontent.com"]
                [[openshell.supervisor.credentials]]
                name = "openai"
                source = "file:secrets/openai"
                hosts = ["api.openai.com"]
                """).value();
        CredentialRule github = config.credentials().get(0);
        assertEquals(new CredentialSource.Environment("GITHUB_TOKEN"), github.source());
        assertTrue(github.appliesTo("raw.githubusercontent.com"));
        assertFalse(github.appliesTo("github.com"));
        assertEquals(HostPattern.parse("api.github.com"), github.hosts().get(0));
        assertEquals(new CredentialSource.SecretFile(Path.of("/etc/supervisor/secrets/openai")),
                config.credentials().get(1).source());
        assertEquals("env:GITHUB_TOKEN", github.source().toString());
    }

    @Test
    void credentialPlacements() {
        GatewayConfig config = load("""
                [[openshell.supervisor.credentials]]
                name = "key"
                source = "env:KEY"
                hosts = ["api.test"]
                headers = ["X-Api-Key", "cookie"]
                query_params = ["key"]
                basic = ["password"]
                allow_plaintext = true
                ports = [443, 8443]
                [[openshell.supervisor.credentials]]
                name = "plain"
                source = "env:KEY"
                hosts = ["api.test"]
                """).value();
        CredentialRule key = config.credentials().get(0);
        assertEquals(List.of("x-api-key", "cookie"), key.headers().castToList());
        assertEquals(List.of("key"), key.queryParams().castToList());
        assertEquals(List.of("password"), key.basic().castToList());
        assertTrue(key.allowPlaintext());
        assertEquals(List.of(443, 8443), key.ports().castToList());
        CredentialRule plain = config.credentials().get(1);
        assertFalse(plain.allowPlaintext(), "https only by default");
        assertTrue(plain.headers().isEmpty() && plain.queryParams().isEmpty() && plain.basic().isEmpty()
                && plain.ports().isEmpty());

        PolicyException e = rejected("""
                [[openshell.supervisor.credentials]]
                name = "key"
                source = "env:KEY"
                hosts = ["api.test"]
                headers = ["Proxy-Authorization", "bad header"]
                basic = ["both"]
                allow_plaintext = "yes"
                ports = [0, "x"]
                """);
        assertEquals(List.of(
                "g.toml:5:1: error: openshell.supervisor.credentials[0].headers: header 'proxy-authorization' never"
                        + " carries a credential upstream (Proxy-* and hop-by-hop fields are not forwarded)",
                "g.toml:5:35: error: openshell.supervisor.credentials[0].headers[1]: expected a header field name,"
                        + " found the string 'bad header'",
                "g.toml:6:10: error: openshell.supervisor.credentials[0].basic[0]: expected user or password, found"
                        + " the string 'both'",
                "g.toml:7:1: error: openshell.supervisor.credentials[0].allow_plaintext: expected true or false,"
                        + " found the string 'yes'",
                "g.toml:8:10: error: openshell.supervisor.credentials[0].ports[0]: expected a port 1..65535, found"
                        + " the number 0",
                "g.toml:8:13: error: openshell.supervisor.credentials[0].ports[1]: expected a port 1..65535, found"
                        + " the string 'x'"),
                e.errors().collect(ConfigProblem::describe).castToList());
    }

    @Test
    void openShellCredentialProfileFieldsMeanWhatTheySayThere() {
        GatewayConfig config = load("""
                [[openshell.supervisor.credentials]]
                name = "bearer"
                source = "env:KEY"
                hosts = ["api.test"]
                auth_style = "bearer"
                header_name = "Authorization"
                [[openshell.supervisor.credentials]]
                name = "query"
                source = "env:KEY"
                hosts = ["api.test"]
                auth_style = "query"
                query_param = "api_key"
                query_params = ["key"]
                [[openshell.supervisor.credentials]]
                name = "basic"
                source = "env:KEY"
                hosts = ["api.test"]
                auth_style = "basic"
                allow_unscanned_responses = true
                """).value();
        assertEquals(List.of("authorization"), config.credentials().get(0).headers().castToList());
        assertEquals(List.of("key", "api_key"), config.credentials().get(1).queryParams().castToList());
        assertEquals(List.of("user", "password"), config.credentials().get(2).basic().castToList());
        assertTrue(config.credentials().get(2).allowUnscannedResponses());
        assertFalse(config.credentials().get(0).allowUnscannedResponses(), "refused unless the rule opts out");

        PolicyException e = rejected("""
                [[openshell.supervisor.credentials]]
                name = "key"
                source = "env:KEY"
                hosts = ["api.test"]
                auth_style = "path"
                [[openshell.supervisor.credentials]]
                name = "other"
                source = "env:KEY"
                hosts = ["api.test"]
                auth_style = "header"
                """);
        assertEquals(List.of(
                "g.toml:5:1: error: openshell.supervisor.credentials[0].auth_style: auth_style path is not supported:"
                        + " this supervisor never places a credential in the request path",
                "g.toml:10:1: error: openshell.supervisor.credentials[1].auth_style: header_name is required for"
                        + " header auth (OpenShell's credential profile field)"),
                e.errors().collect(ConfigProblem::describe).castToList());
    }

    @Test
    void credentialErrors() {
        PolicyException e = rejected("""
                [[openshell.supervisor.credentials]]
                name = "github"
                source = "vault:kv/github"
                hosts = []
                [[openshell.supervisor.credentials]]
                name = "github"
                source = "env:1TOKEN"
                hosts = ["api..github.com", 7]
                [[openshell.supervisor.credentials]]
                name = "x"
                [[openshell.supervisor.credentials]]
                name = "github-token"
                source = "env:T"
                hosts = ["a.com"]
                """);
        assertEquals(List.of(
                "g.toml:3:1: error: openshell.supervisor.credentials[0].source: invalid credential source"
                        + " 'vault:kv/github': write env:VARIABLE or file:/path/to/secret",
                "g.toml:4:1: error: openshell.supervisor.credentials[0].hosts: hosts must list at least one host"
                        + " pattern",
                "g.toml:6:1: error: openshell.supervisor.credentials[1].name: name 'github' is already used by"
                        + " openshell.supervisor.credentials[0]; names must be unique",
                "g.toml:7:1: error: openshell.supervisor.credentials[1].source: invalid credential source"
                        + " 'env:1TOKEN': environment variable names are letters, digits and '_', not starting with a"
                        + " digit",
                "g.toml:8:10: error: openshell.supervisor.credentials[1].hosts[0]: invalid host pattern"
                        + " 'api..github.com': it has an empty DNS label (a leading, trailing or doubled '.')",
                "g.toml:8:29: error: openshell.supervisor.credentials[1].hosts[1]: expected a string, found the"
                        + " number 7",
                "g.toml:9:1: error: openshell.supervisor.credentials[2]: source is required: env:VARIABLE or"
                        + " file:/path/to/secret",
                "g.toml:9:1: error: openshell.supervisor.credentials[2]: hosts is required: the host patterns the"
                        + " secret may be sent to",
                "g.toml:12:1: error: openshell.supervisor.credentials[3].name: name 'github-token' must be a letter"
                        + " or '_' followed by up to 127 letters, digits or '_' (request placeholders refer to it)"),
                e.errors().collect(ConfigProblem::describe).castToList());
    }

    @Test
    void pluginPins() {
        String sha = "ab".repeat(32);
        GatewayConfig g = load("""
                [[openshell.supervisor.plugin_pins]]
                entry = "acme-pii.jar"
                sha256 = "%s"
                [[openshell.supervisor.plugin_pins]]
                entry = "acme-dir"
                sha256 = "%s"
                """.formatted(sha, sha.toUpperCase(java.util.Locale.ROOT))).value();
        assertEquals(List.of(new PluginPin("acme-pii.jar", sha), new PluginPin("acme-dir", sha)),
                g.pluginPins().castToList());
        assertEquals(List.of(), load("").value().pluginPins().castToList(), "no pins: no plugin loads");
    }

    @Test
    void pluginPinErrors() {
        PolicyException e = rejected("""
                [[openshell.supervisor.plugin_pins]]
                entry = "../evil.jar"
                sha256 = "abc"
                [[openshell.supervisor.plugin_pins]]
                sha = "%s"
                [[openshell.supervisor.plugin_pins]]
                entry = "a.jar"
                sha256 = "%s"
                [[openshell.supervisor.plugin_pins]]
                entry = "a.jar"
                sha256 = "%s"
                """.formatted("0".repeat(64), "0".repeat(64), "1".repeat(64)));
        assertEquals(List.of(
                "g.toml:2:1: error: openshell.supervisor.plugin_pins[0].entry: entry is a name in the plugins"
                        + " directory, not a path (no '/')",
                "g.toml:3:1: error: openshell.supervisor.plugin_pins[0].sha256: sha256 must be 64 hexadecimal digits",
                "g.toml:4:1: error: openshell.supervisor.plugin_pins[1]: entry is required: the plugin's file or"
                        + " directory name in the plugins directory",
                "g.toml:4:1: error: openshell.supervisor.plugin_pins[1]: sha256 is required: the digest `supervisor"
                        + " plugins --pin` prints",
                "g.toml:5:1: error: openshell.supervisor.plugin_pins[1].sha: unknown key 'sha'; allowed keys: entry,"
                        + " sha256",
                "g.toml:10:1: error: openshell.supervisor.plugin_pins[3].entry: plugin 'a.jar' is already pinned at"
                        + " openshell.supervisor.plugin_pins[2]"),
                e.errors().collect(ConfigProblem::describe).castToList());
    }

    @Test
    void syntaxErrorsAreAllReportedWithTheirLines() {
        PolicyException e = rejected("""
                [openshell.supervisor]
                listen = "127.0.0.1:1"
                listen = "127.0.0.1:2"
                state_dir =
                """);
        assertEquals(List.of(3, 4), e.errors().collect(p -> p.location().line()).castToList());
        assertTrue(e.errors().allSatisfy(p -> p.message().startsWith("TOML syntax error: ")), e::getMessage);
    }

    @Test
    void everyErrorIsReportedAtOnce() {
        PolicyException e = rejected("""
                [[openshell.supervisor.middleware]]
                name = "a"
                grpc_endpoint = "http://127.0.0.1:1"
                max_body_bytes = 9999999
                timeout = "1m"
                [[openshell.supervisor.middleware]]
                name = "b"
                grpc_endpoint = "https://b.internal"
                max_body_bytes = 1
                colour = "blue"
                """);
        assertEquals(List.of(
                "openshell.supervisor.middleware[0].grpc_endpoint",
                "openshell.supervisor.middleware[0].max_body_bytes",
                "openshell.supervisor.middleware[0].timeout",
                "openshell.supervisor.middleware[1].colour"), e.errors().collect(ConfigProblem::keyPath).castToList());
    }

    @Test
    void theBenchmarkGatewayLoads() {
        Path file = dev.openshell.supervisor.policy.SharedFiles.require("bench-peers/conf/sup-gateway.toml");
        Loaded<GatewayConfig> loaded = GatewayConfigLoader.load(file);
        assertTrue(loaded.value().supervisor().network().allowLoopbackUpstreams());
        assertTrue(loaded.warnings().isEmpty());
        assertTrue(loaded.value().middleware().isEmpty());
    }

    @Test
    void filesResolvePathsAgainstTheirDirectory(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("gateway.toml");
        Files.writeString(file, "[openshell.supervisor]\nplugins_dir = \"plugins\"\n");
        assertEquals(Optional.of(dir.toAbsolutePath().resolve("plugins")),
                GatewayConfigLoader.load(file).value().supervisor().pluginsDir());
        assertEquals("cannot read the file: it does not exist", assertThrows(PolicyException.class,
                () -> GatewayConfigLoader.load(dir.resolve("missing.toml"))).errors().getOnly().message());
    }

    @Test
    void equalConfigurationsCompareEqual() {
        GatewayConfig a = load(registration("timeout = \"1s\"\n")).value();
        GatewayConfig b = load("# a comment\n" + registration("timeout = \"1000ms\"\n")).value();
        assertEquals(a, b);
        assertNotEquals(a, load(registration("timeout = \"2s\"\n")).value());
    }

    @Test
    void aMisplacedKeyGetsWhereItBelongs() {
        PolicyException e = assertThrows(PolicyException.class, () -> GatewayConfigLoader.parse("g.toml", """
                [openshell.supervisor]
                admin_listen = "127.0.0.1:9464"
                allow_loopback_upstreams = true
                """, BASE));
        List<String> lines = e.problems().stream().map(ConfigProblem::describe)
                .toList();
        assertTrue(lines.get(0).startsWith("g.toml:2:1: error: openshell.supervisor.admin_listen: unknown key "
                + "'admin_listen' (did you mean listen in [openshell.supervisor.admin]?)"), lines.toString());
        assertTrue(lines.get(1).contains("(did you mean allow_loopback_upstreams in [openshell.supervisor.network]?)"),
                lines.toString());
    }

    @Test
    void extensionAuthSetsTheTokenIdentityAndChecksItsRanges() {
        Loaded<GatewayConfig> loaded = load("""
                [openshell.supervisor.extension_auth]
                gateway_id = "gw-a"
                sandbox_id = "sb-1"
                token_lifetime_seconds = 120
                """);
        ExtensionAuthSettings ea = loaded.value().supervisor().extensionAuth();
        assertEquals("openshell-gateway:gw-a", ea.effectiveIssuer());
        assertEquals(Optional.of("sb-1"), ea.sandboxId());
        assertEquals(120, ea.tokenLifetimeSeconds());
        assertEquals(ExtensionAuthSettings.defaults(), load("").value().supervisor().extensionAuth());
        assertEquals("openshell-gateway:openshell", ExtensionAuthSettings.defaults().effectiveIssuer());
        PolicyException e = rejected("""
                [openshell.supervisor.extension_auth]
                gateway_id = "no spaces"
                token_lifetime_seconds = 7200
                """);
        assertTrue(e.getMessage().contains("token_lifetime_seconds"), e.getMessage());
    }
}
