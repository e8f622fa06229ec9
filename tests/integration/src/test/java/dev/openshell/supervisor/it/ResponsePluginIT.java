package dev.openshell.supervisor.it;

import static dev.openshell.supervisor.it.StagedUpstream.AWS_KEY;
import static dev.openshell.supervisor.it.StagedUpstream.MARKER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Response middleware through in-process stages in the image: {@code supervisor run}, a third-party plugin JAR dropped
 * into its plugins directory and pinned ({@code tests/fixture-plugins/response-marker}, binding
 * {@code fixture/response-marker}, which logs what it saw to a file its config names) and the built-in
 * {@code openshell/regex-response}, Java's HttpClient as the sandbox, loopback upstreams over plain HTTP and HTTPS
 * (intercepted). One host per chain:
 * <ul>
 *   <li>{@code plugin.test}, the plugin alone: a JSON page transformed whole ({@code WHOLE_BODY_BYTES}), a gzip page
 *       inspected decoded, an event stream transformed unit by unit ({@code STREAM_BYTES}) whose first event reaches
 *       the sandbox before the upstream sends its last, a preflight block (no upstream byte), a skip;</li>
 *   <li>{@code regex.test} / {@code deny.test}: {@code openshell/regex-response} blocking a {@code br} body,
 *       redacting (or blocking) a key in a response header and a key split across two upstream writes of an event;
 *       redacting a key in a JSON page and in
 *       an event stream, and refusing one ({@code mode: deny});</li>
 *   <li>{@code chain.test}: the plugin (order 40) replaces the marker with an access key, {@code openshell/regex-response}
 *       (order 50) redacts that key: the second stage saw the first one's output;</li>
 *   <li>{@code cred.test}: a credential injected into {@code x-api-key} and echoed back by the upstream in a response
 *       header and the body: the plugin never sees the value (it sees the placeholder), nor does the sandbox.</li>
 * </ul>
 * Each stage invocation is an HTTP Activity record of phase {@code pre_return}; no output of the supervisor holds the
 * injected value.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ResponsePluginIT {
    static final String API_TOKEN = "cred-" + CredentialInjectionIT.hex(16);
    static final String PLACEHOLDER = CredentialInjectionIT.placeholder("API_TOKEN");
    static final String REDACTED = "[REDACTED:aws_access_key_id]";

    @TempDir
    static Path work;

    private static StagedUpstream plain;
    private static StagedUpstream tls;
    private static EchoUpstream echoPlain;
    private static EchoUpstream echoTls;
    private static StackProcess supervisor;
    private static HttpClient client;

    @BeforeAll
    static void start() throws Exception {
        Path pki = Files.createDirectories(work.resolve("pki"));
        TestPki.Issued ca = TestPki.ca(pki, "upstream-ca");
        TestPki.Issued leaf = TestPki.leaf(pki, "upstream", ca, "plugin.test", "regex.test", "deny.test",
                "chain.test", "cred.test");
        plain = StagedUpstream.plain();
        tls = StagedUpstream.tls(ProxyWorld.serverContext(leaf));
        echoPlain = EchoUpstream.plain();
        echoTls = EchoUpstream.tls(ProxyWorld.serverContext(leaf));
        Path plugins = Files.createDirectories(work.resolve("supervisor").resolve("plugins"));
        Path jar = Files.copy(Image.plugin("fixture-response-marker"),
                plugins.resolve("fixture-response-marker.jar"));
        StringBuilder hosts = new StringBuilder();
        for (String h : List.of("plugin.test", "regex.test", "deny.test", "chain.test", "cred.test")) {
            hosts.append('"').append(h).append("\" = \"127.0.0.1\"\n");
        }
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                %s
                [openshell.supervisor.tls]
                upstream_ca_bundle = "%s"

                [[openshell.supervisor.credentials]]
                name = "API_TOKEN"
                source = "env:IT_API_TOKEN"
                hosts = ["cred.test"]
                headers = ["x-api-key"]
                allow_plaintext = true
                """.formatted(hosts, ca.certFile().toAbsolutePath()) + Image.pins(jar));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  staged:
                    endpoints:
                      - { host: plugin.test, ports: [%1$d, %2$d] }
                      - { host: regex.test, ports: [%1$d, %2$d] }
                      - { host: deny.test, ports: [%1$d, %2$d] }
                      - { host: chain.test, ports: [%1$d, %2$d] }
                  echo:
                    endpoints:
                      - { host: cred.test, ports: [%3$d, %4$d] }
                network_middlewares:
                  marker:
                    middleware: fixture/response-marker
                    order: 10
                    on_error: fail_closed
                    config: { log: "%5$s", marker: %6$s }
                    endpoints: { include: [plugin.test] }
                  secrets-back:
                    middleware: openshell/regex-response
                    order: 20
                    on_error: fail_closed
                    config: { mode: redact }
                    endpoints: { include: [regex.test] }
                  secrets-refused:
                    middleware: openshell/regex-response
                    order: 30
                    on_error: fail_closed
                    config: { mode: deny }
                    endpoints: { include: [deny.test] }
                  chain-marker:
                    middleware: fixture/response-marker
                    order: 40
                    on_error: fail_closed
                    config: { log: "%7$s", marker: %6$s, replacement: %8$s }
                    endpoints: { include: [chain.test] }
                  chain-secrets:
                    middleware: openshell/regex-response
                    order: 50
                    on_error: fail_closed
                    config: { mode: redact }
                    endpoints: { include: [chain.test] }
                  cred-marker:
                    middleware: fixture/response-marker
                    order: 60
                    on_error: fail_closed
                    config: { log: "%9$s", marker: %6$s }
                    endpoints: { include: [cred.test] }
                """.formatted(plain.port(), tls.port(), echoPlain.port(), echoTls.port(), log("plugin"), MARKER,
                log("chain"), AWS_KEY, log("cred")));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway,
                Map.of("IT_API_TOKEN", API_TOKEN));
        client = HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", supervisor.port())))
                .sslContext(ProxyWorld.trusting(work.resolve("supervisor").resolve("state").resolve("ca")
                        .resolve("supervisor-ca.pem")))
                .connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {supervisor, plain, tls, echoPlain, echoTls}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // keep closing the rest
            }
        }
    }

    private static Path log(String name) {
        return work.resolve(name + ".log");
    }

    private static URI url(String scheme, String host, String path) {
        boolean echo = host.equals("cred.test");
        int port = scheme.equals("https") ? (echo ? echoTls.port() : tls.port())
                : (echo ? echoPlain.port() : plain.port());
        return URI.create(scheme + "://" + host + ":" + port + path);
    }

    private static HttpResponse<String> get(String scheme, String host, String path, String... headers)
            throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(url(scheme, host, path)).timeout(Duration.ofSeconds(30));
        if (headers.length > 0) {
            b.headers(headers);
        }
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** One response as the plugin saw it: its preflight line, the head's fields, each unit's bytes as text. */
    record Seen(String preflight, List<String> headers, List<String> units) {
        String body() {
            return String.join("", units);
        }
    }

    /** {@return what the plugin logged for the last response whose preflight line starts with {@code prefix}} */
    private static Seen seen(String logName, String prefix) throws IOException {
        List<Seen> all = new ArrayList<>();
        for (String line : Files.readAllLines(log(logName), StandardCharsets.UTF_8)) {
            if (line.startsWith("preflight ")) {
                all.add(new Seen(line, new ArrayList<>(), new ArrayList<>()));
            } else if (line.startsWith("header ") && !all.isEmpty()) {
                all.getLast().headers().add(line.substring("header ".length()));
            } else if (line.startsWith("body ") && !all.isEmpty()) {
                String[] p = line.split(" ", 4);
                all.getLast().units().add(new String(Base64.getDecoder().decode(p.length > 3 ? p[3] : ""),
                        StandardCharsets.UTF_8));
            }
        }
        return all.reversed().stream().filter(s -> s.preflight().startsWith("preflight " + prefix)).findFirst()
                .orElseThrow(() -> new AssertionError("the plugin saw no " + prefix + ": " + all));
    }

    /** Reads an event stream: the first event, then releases the upstream's last event, then the rest. */
    private static List<String> events(String scheme, String host, String path) throws Exception {
        StagedUpstream up = scheme.equals("https") ? tls : plain;
        CountDownLatch second = up.armEvents();
        List<String> lines = new ArrayList<>();
        try {
            HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(url(scheme, host, path))
                    .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, r.statusCode());
            try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
                lines.add(in.readLine());
                lines.add(in.readLine());
                // the upstream sends its last event only now, after the sandbox has read the first
                second.countDown();
                for (String l; (l = in.readLine()) != null; ) {
                    lines.add(l);
                }
            }
        } finally {
            second.countDown();
        }
        assertTrue(up.releasedInTime, "the last event was sent after the first reached the sandbox");
        return lines;
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void thePluginTransformsAJsonPageWhole(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "plugin.test", "/json");
        assertEquals(200, r.statusCode(), r.body() + "\n" + supervisor.stderr());
        assertEquals("{\"page\":\"hello [marked] world\"}", r.body());
        assertEquals("whole_body_bytes", r.headers().firstValue("x-response-marker").orElse(""));
        assertEquals(String.valueOf(r.body().length()), r.headers().firstValue("content-length").orElse(""));
        Seen s = seen("plugin", scheme + " /json 200 ");
        assertTrue(s.preflight().contains("WHOLE_BODY_BYTES"), s.preflight());
        assertEquals(List.of("{\"page\":\"hello " + MARKER + " world\"}"), s.units(), "one unit: the whole body");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void thePluginInspectsAGzipPageDecodedAndItIsDeliveredDecoded(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "plugin.test", "/gzip");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"page\":\"zipped [marked]\"}", r.body());
        assertTrue(r.headers().firstValue("content-encoding").isEmpty());
        Seen s = seen("plugin", scheme + " /gzip 200 ");
        assertEquals("{\"page\":\"zipped " + MARKER + "\"}", s.body());
        assertFalse(s.headers().stream().anyMatch(h -> h.startsWith("content-encoding:")), s.headers().toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void thePluginTransformsAnEventStreamThatKeepsStreaming(String scheme) throws Exception {
        List<String> lines = events(scheme, "plugin.test", "/events");
        assertEquals(List.of("data: one [marked]", "", "data: two", ""), lines);
        Seen s = seen("plugin", scheme + " /events 200 ");
        assertFalse(s.preflight().contains("WHOLE_BODY_BYTES"), "an event stream: " + s.preflight());
        assertTrue(s.units().size() >= 2, "unit by unit: " + s.units());
        assertEquals("data: one " + MARKER + "\n\n", s.units().getFirst());
        assertEquals("data: one " + MARKER + "\n\ndata: two\n\n", s.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void thePluginBlocksOneAtPreflightAndSkipsAnother(String scheme) throws Exception {
        HttpResponse<String> blocked = get(scheme, "plugin.test", "/blocked");
        assertEquals(502, blocked.statusCode());
        assertTrue(blocked.body().contains("response_blocked") && blocked.body().contains("fixture_blocked"),
                blocked.body());
        assertFalse(blocked.body().contains("UPSTREAM-BLOCKED-PAGE"), blocked.body());
        assertTrue(seen("plugin", scheme + " /blocked 200 ").units().isEmpty(), "no unit after a block");

        HttpResponse<String> skipped = get(scheme, "plugin.test", "/skip");
        assertEquals(200, skipped.statusCode());
        assertEquals("{\"page\":\"" + MARKER + " left alone\"}", skipped.body());
        assertTrue(skipped.headers().firstValue("x-response-marker").isEmpty());
        assertTrue(seen("plugin", scheme + " /skip 200 ").units().isEmpty(), "no unit after a skip");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void theBuiltInRedactsAKeyInAJsonPageAndInAnEventStream(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "regex.test", "/secret");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"key\":\"" + REDACTED + "\",\"note\":\"" + MARKER + "\"}", r.body());
        assertEquals(List.of("data: key " + REDACTED, "", "data: two", ""), events(scheme, "regex.test",
                "/secret-events"));
    }

    @Test
    void aWebSocketUpgradeToAHostOnlyAFailClosedResponseStageSelectsIsRefused() throws Exception {
        try (java.net.Socket sock = new java.net.Socket("127.0.0.1", supervisor.port())) {
            sock.setSoTimeout(30_000);
            sock.getOutputStream().write(("GET http://regex.test:" + plain.port() + "/ws HTTP/1.1\r\nHost: regex.test:"
                    + plain.port() + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                    + "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String head = new String(sock.getInputStream().readNBytes(12), java.nio.charset.StandardCharsets.US_ASCII);
            assertEquals("HTTP/1.1 403", head, "the upgrade is refused, not switched");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void theBuiltInInDenyModeWithholdsAWholeBodyAndCutsOffAStream(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "deny.test", "/secret");
        assertEquals(502, r.statusCode(), r.body());
        assertTrue(r.body().contains("response_middleware_failed") && r.body().contains("secret_detected"), r.body());
        assertFalse(r.body().contains(AWS_KEY) || r.body().contains(MARKER), "no upstream byte: " + r.body());

        StagedUpstream up = scheme.equals("https") ? tls : plain;
        CountDownLatch second = up.armEvents();
        StringBuilder got = new StringBuilder();
        boolean incomplete = false;
        try {
            HttpResponse<InputStream> s = client.send(HttpRequest.newBuilder(url(scheme, "deny.test",
                    "/secret-events")).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            if (s.statusCode() == 502) {
                incomplete = true; // refused before the head was committed
            }
            try (InputStream in = s.body()) {
                got.append(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            incomplete = true; // cut off without the terminating chunk
        } finally {
            second.countDown();
        }
        assertTrue(incomplete, "the stream must not look complete: " + got);
        assertFalse(got.toString().contains(AWS_KEY), got.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void theBuiltInBlocksABodyInACodingItCannotReadInBothModes(String scheme) throws Exception {
        for (String host : List.of("regex.test", "deny.test")) {
            HttpResponse<String> r = get(scheme, host, "/br");
            assertEquals(502, r.statusCode(), r.body());
            assertTrue(r.body().contains("response_blocked") && r.body().contains("response_uninspectable"),
                    r.body());
            assertFalse(r.body().contains(AWS_KEY), "no upstream byte: " + r.body());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void theBuiltInRedactsOrBlocksAKeyInAResponseHeader(String scheme) throws Exception {
        HttpResponse<String> redacted = get(scheme, "regex.test", "/header");
        assertEquals(200, redacted.statusCode(), redacted.body());
        assertEquals("clean page", redacted.body());
        assertEquals(List.of("key " + REDACTED), redacted.headers().allValues("x-leak"));
        HttpResponse<String> denied = get(scheme, "deny.test", "/header");
        assertEquals(502, denied.statusCode(), denied.body());
        assertTrue(denied.body().contains("response_blocked") && denied.body().contains("secret_detected"),
                denied.body());
        assertFalse(denied.headers().map().toString().contains(AWS_KEY) || denied.body().contains(AWS_KEY));
    }

    /**
     * A {@code 103 Early Hints} head holding a key, on a host a {@code fail_closed} response stage selects: the
     * contract never evaluates interim heads, so the supervisor withholds them (the sandbox's curl sees only the
     * final head, which went through the stage); recorded in the audit log (last test).
     */
    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void anInterimHeadIsWithheldOnAHostAFailClosedResponseStageSelects(String scheme) throws Exception {
        Curl.Result r = Curl.run("-x", "http://127.0.0.1:" + supervisor.port(), "-i", "--cacert",
                work.resolve("supervisor").resolve("state").resolve("ca").resolve("supervisor-ca.pem").toString(),
                url(scheme, "regex.test", "/early-hints").toString());
        assertEquals(0, r.exit(), r.toString());
        assertEquals(200, r.status(), r.toString());
        assertFalse(r.body().contains(" 103"), "an interim head reached the sandbox: " + r.body());
        assertFalse(r.body().contains(AWS_KEY), r.body());
        assertTrue(r.body().startsWith("HTTP/1.1 200") && r.body().endsWith("clean page"), r.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void theBuiltInSeesAKeySplitAcrossTwoUpstreamWritesOfAnEvent(String scheme) throws Exception {
        assertEquals(List.of("data: one", "", "data: key " + REDACTED + " tail", "", "data: two", ""),
                events(scheme, "regex.test", "/split-events"));

        StagedUpstream up = scheme.equals("https") ? tls : plain;
        CountDownLatch second = up.armEvents();
        StringBuilder got = new StringBuilder();
        boolean incomplete = false;
        try {
            HttpResponse<InputStream> s = client.send(HttpRequest.newBuilder(url(scheme, "deny.test",
                    "/split-events")).timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, s.statusCode());
            try (BufferedReader in = new BufferedReader(new InputStreamReader(s.body(), StandardCharsets.UTF_8))) {
                got.append(in.readLine()).append('\n').append(in.readLine()).append('\n');
                second.countDown(); // the first event arrived: the key's first half is held by the stage
                for (String l; (l = in.readLine()) != null; ) {
                    got.append(l).append('\n');
                }
            }
        } catch (IOException e) {
            incomplete = true; // cut off without the terminating chunk
        } finally {
            second.countDown();
        }
        assertTrue(incomplete, "the stream must not look complete: " + got);
        assertEquals("data: one\n\n", got.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void inAChainTheSecondStageSeesTheFirstStagesOutput(String scheme) throws Exception {
        HttpResponse<String> r = get(scheme, "chain.test", "/json");
        assertEquals(200, r.statusCode(), r.body());
        assertEquals("{\"page\":\"hello " + REDACTED + " world\"}", r.body(),
                "the key exists only in the plugin's output: openshell/regex-response (order 50) saw it");
        assertEquals("whole_body_bytes", r.headers().firstValue("x-response-marker").orElse(""));
        assertEquals("{\"page\":\"hello " + MARKER + " world\"}", seen("chain", scheme + " /json 200 ").body());

        assertEquals(List.of("data: one " + REDACTED, "", "data: two", ""), events(scheme, "chain.test", "/events"),
                "streamed through both stages");
    }

    @ParameterizedTest
    @ValueSource(strings = {"http", "https"})
    void aStageOnACredentialBoundHostNeverSeesTheInjectedValue(String scheme) throws Exception {
        EchoUpstream up = scheme.equals("https") ? echoTls : echoPlain;
        for (String path : List.of("/anything", "/chunked?stream", "/gzip")) {
            HttpResponse<String> r = get(scheme, "cred.test", path, "X-Api-Key", PLACEHOLDER,
                    "Accept-Encoding", "gzip");
            assertEquals(200, r.statusCode(), path + ": " + r.body());
            assertEquals(API_TOKEN, up.take().header("x-api-key"), "the upstream received the value");
            assertFalse(r.body().contains(API_TOKEN), path + ": the sandbox read the value back");
            assertTrue(r.body().contains(PLACEHOLDER), path + ": " + r.body());
            assertFalse(r.headers().map().toString().contains(API_TOKEN), path + ": " + r.headers().map());

            String p = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
            Seen s = seen("cred", scheme + " " + p + " 200 ");
            assertEquals(path.contains("stream") ? "stream_bytes" : "whole_body_bytes",
                    r.headers().firstValue("x-response-marker").orElse(""), path + ": the mode the stage took");
            assertFalse(s.units().isEmpty(), path + ": the stage inspected the body");
            assertTrue(s.body().contains("\"X-Api-Key\":\"" + PLACEHOLDER + "\""), path + ": " + s.body());
            assertFalse(s.body().contains(API_TOKEN), path + ": the stage saw the value in the body");
            assertFalse(String.join("\n", s.headers()).contains(API_TOKEN), path + ": the stage saw it in a header");
            if (p.equals("/anything")) {
                assertEquals("openshell:resolve:env:API_TOKEN", r.headers().firstValue("x-echo-x-api-key")
                        .orElse(""));
                assertTrue(s.headers().contains("x-echo-x-api-key: " + PLACEHOLDER), s.headers().toString());
            }
        }
        String logText = Files.readString(log("cred"), StandardCharsets.UTF_8);
        assertFalse(logText.contains(API_TOKEN), "the stage's log holds the value");
    }

    /** Last: stops the supervisor, so that its audit log and output are complete. */
    @Test
    @Order(Integer.MAX_VALUE)
    void eachStageIsAuditedAndNoOutputHoldsTheInjectedValue() throws Exception {
        String metrics = supervisor.metrics();
        supervisor.close();
        List<JsonObject> stages = supervisor.auditEvents().stream().filter(e -> e.getInt("class_uid", 0) == 4002
                && AuditLog.openshell(e).getString("phase", "").equals("pre_return")).toList();
        for (String key : List.of("marker", "secrets-back", "secrets-refused", "chain-marker", "chain-secrets",
                "cred-marker")) {
            assertTrue(stages.stream().anyMatch(e -> AuditLog.openshell(e).getString("config_key", "").equals(key)),
                    "no pre_return record of " + key);
        }
        assertTrue(stages.stream().anyMatch(e -> AuditLog.openshell(e).getString("config_key").equals("marker")
                && AuditLog.openshell(e).getString("binding_id").equals("fixture/response-marker")
                && AuditLog.openshell(e).getBoolean("transformed", false)), "the plugin's transform is recorded");
        assertTrue(stages.stream().anyMatch(e -> AuditLog.openshell(e).getString("config_key").equals("marker")
                && !AuditLog.openshell(e).getString("decision").equals("allowed")), "the plugin's block is recorded");
        for (String key : List.of("secrets-back", "secrets-refused")) {
            assertTrue(stages.stream().anyMatch(e -> AuditLog.openshell(e).getString("config_key").equals(key)
                    && !AuditLog.openshell(e).getString("decision").equals("allowed")
                    && e.toString().contains("response_uninspectable")), "the uninspectable block of " + key);
        }
        assertTrue(supervisor.auditEvents().stream().anyMatch(e -> e.getInt("class_uid", 0) == 2004
                && e.toString().contains("interim_response_uninspectable") && e.toString().contains("secrets-back")),
                "the withheld interim head is a finding naming the fail_closed response config");
        Map<String, String> outputs = Map.of("standard output", supervisor.stdout(), "standard error",
                supervisor.stderr(), "audit log", supervisor.auditText(), "/metrics", metrics);
        for (var o : outputs.entrySet()) {
            assertFalse(o.getValue().contains(API_TOKEN), o.getKey() + " holds the injected value");
        }
    }
}
