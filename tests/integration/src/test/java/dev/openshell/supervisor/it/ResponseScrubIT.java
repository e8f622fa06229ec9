package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * "Nothing comes back" (issue 22, item 2), end to end: {@code supervisor run} from the image, the system's
 * {@code curl} as the sandbox, and an upstream on 127.0.0.1 that echoes what it received ({@link EchoUpstream}) over
 * plain HTTP and HTTPS (intercepted). The upstream receives each real value where its rule places it; the sandbox
 * reads none of them back, in no header, status line or body, in no framing or coding, and gets each placeholder
 * instead. Each scrub is a High Detection Finding and a metric; no value reaches any output of the supervisor.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ResponseScrubIT {
    /** {@code /} and {@code +}: its JSON-escaped and percent-encoded forms differ from it. */
    static final String API_TOKEN = "scrub/api+" + hex(12);
    static final String COOKIE_TOKEN = "scrub-cookie-" + hex(12);
    static final String BASIC_PASS = "scrub-basic-" + hex(12);

    @TempDir
    static Path work;

    private static EchoUpstream plain;
    private static EchoUpstream tls;
    private static StackProcess supervisor;
    private static final List<String> SANDBOX_SAW = new CopyOnWriteArrayList<>();

    private static String hex(int bytes) {
        return CredentialInjectionIT.hex(bytes);
    }

    private static String placeholder(String name) {
        return CredentialInjectionIT.placeholder(name);
    }

    private static String percent(String s) {
        return CredentialInjectionIT.percent(s);
    }

    @BeforeAll
    static void start() throws Exception {
        LoopbackUpstreams upstreams = LoopbackUpstreams.create(work, "api.test");
        plain = EchoUpstream.plain();
        tls = EchoUpstream.tls(upstreams.serverContext());
        supervisor = upstreams.start(work, """
                [[openshell.supervisor.credentials]]
                name = "API_TOKEN"
                source = "env:IT_API_TOKEN"
                hosts = ["api.test"]
                query_params = ["key", "to"]
                allow_plaintext = true

                [[openshell.supervisor.credentials]]
                name = "COOKIE_TOKEN"
                source = "env:IT_COOKIE_TOKEN"
                hosts = ["api.test"]
                headers = ["cookie"]

                [[openshell.supervisor.credentials]]
                name = "BASIC_PASS"
                source = "env:IT_BASIC_PASS"
                hosts = ["api.test"]
                basic = ["password"]
                allow_plaintext = true
                """, """
                version: 1
                network_policies:
                  echo:
                    endpoints:
                      - { host: api.test, ports: [%d, %d] }
                """.formatted(plain.port(), tls.port()), Map.of(
                "IT_API_TOKEN", API_TOKEN, "IT_COOKIE_TOKEN", COOKIE_TOKEN, "IT_BASIC_PASS", BASIC_PASS));
    }

    @AfterAll
    static void stop() {
        LoopbackUpstreams.closeAll(supervisor, plain, tls);
    }

    private static Path ca() {
        return LoopbackUpstreams.supervisorCa(work);
    }

    /** curl through the supervisor, head included in the output ({@code -i}); HTTPS trusts the supervisor CA. */
    private static Curl.Result curl(boolean https, String path, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("-x", "http://127.0.0.1:" + supervisor.port(), "-i"));
        if (https) {
            cmd.addAll(List.of("--cacert", ca().toString()));
        }
        cmd.addAll(List.of(args));
        cmd.add((https ? "https://api.test:" + tls.port() : "http://api.test:" + plain.port()) + path);
        Curl.Result r = Curl.run(cmd.toArray(String[]::new));
        SANDBOX_SAW.add(r.body());
        assertEquals(0, r.exit(), r.toString());
        return r;
    }

    /** Every form of every secret a response could echo. */
    private static List<String> secretForms() {
        List<String> forms = new ArrayList<>();
        for (String s : List.of(API_TOKEN, COOKIE_TOKEN, BASIC_PASS)) {
            forms.add(s);
            forms.add(percent(s));
            forms.add(s.replace("/", "\\/"));
            forms.add(Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8)));
        }
        forms.add(Base64.getEncoder().encodeToString(("alice:" + BASIC_PASS).getBytes(StandardCharsets.UTF_8)));
        return forms;
    }

    /** The output with field names lowercased (the supervisor writes the field names of a rewritten head so). */
    private static String lower(Curl.Result r) {
        return r.body().lines().map(l -> {
            int c = l.indexOf(':');
            return c > 0 && !l.startsWith("{") ? l.substring(0, c).toLowerCase(java.util.Locale.ROOT) + l.substring(c)
                    : l;
        }).collect(java.util.stream.Collectors.joining("\n")).replace("\"X-Reflect\"", "\"x-reflect\"");
    }

    private static void assertNoSecret(Curl.Result r) {
        List<String> forms = secretForms();
        for (int i = 0; i < forms.size(); i++) {
            assertFalse(r.body().contains(forms.get(i)), "the sandbox read secret form #" + i + " back");
        }
    }

    @Test
    @Order(1)
    void aReflectedHeaderComesBackAsThePlaceholderOverHttpAndHttps() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            Curl.Result r = curl(https, "/anything", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
            assertEquals(200, r.status(), r.toString());
            assertNoSecret(r);
            assertTrue(lower(r).contains("x-echo-x-reflect: " + placeholder("API_TOKEN")), r.body());
            assertTrue(lower(r).contains("set-cookie: echo=" + placeholder("API_TOKEN")), r.body());
            assertTrue(lower(r).contains("www-authenticate: Bearer error=\"" + placeholder("API_TOKEN")), r.body());
            assertTrue(lower(r).contains("\"x-reflect\":\"" + placeholder("API_TOKEN") + "\""), r.body());
            EchoUpstream.Received got = (https ? tls : plain).take();
            assertEquals(API_TOKEN, got.header("x-reflect"), "the upstream did receive the value");
        }
    }

    /** A {@code 103 Early Hints} head echoing the value is scrubbed like a final head, over HTTP and HTTPS. */
    @Test
    @Order(2)
    void anInterimHeadEchoingTheValueComesBackAsThePlaceholder() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            Curl.Result r = curl(https, "/early-hints", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
            assertEquals(200, r.status(), r.toString());
            assertNoSecret(r);
            String out = lower(r);
            assertTrue(r.body().contains("HTTP/1.1 103 Early " + placeholder("API_TOKEN") + "\r\n"), r.body());
            assertTrue(out.contains("link: </s.css?k=" + placeholder("API_TOKEN") + ">"), r.body());
            assertTrue(out.contains("x-hint: " + placeholder("API_TOKEN")), r.body());
            assertTrue(r.body().endsWith("ok"), r.body());
            assertEquals(API_TOKEN, (https ? tls : plain).take().header("x-reflect"), "the upstream got the value");
        }
    }

    /** A value split across two server-sent events: a client joining the events' data reads the placeholder. */
    @Test
    @Order(2)
    void aValueSplitAcrossTwoServerSentEventsComesBackAsThePlaceholder() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            Curl.Result r = curl(https, "/sse-split", "-N", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
            assertEquals(200, r.status(), r.toString());
            String body = r.body().substring(r.body().indexOf("data: one")); // after the head(s) curl -i wrote
            String joined = body.lines().filter(l -> l.startsWith("data: ")).map(l -> l.substring(6))
                    .collect(java.util.stream.Collectors.joining());
            assertFalse(joined.contains(API_TOKEN), "a client joining the events read the value: " + body);
            assertEquals("data: one\n\ndata: key \n\ndata: " + placeholder("API_TOKEN") + " tail\n\ndata: two\n\n",
                    body);
            assertEquals(API_TOKEN, (https ? tls : plain).take().header("x-reflect"), "the upstream got the value");
        }
    }

    /**
     * The value split across two events in the forms WHATWG clients read (after a byte order mark; JSON spanning two
     * {@code data} lines; without a media type, whole and chunked): the client's joined text holds the placeholder.
     */
    @Test
    @Order(2)
    void aValueSplitAcrossEventsInEveryWhatwgFormComesBackAsThePlaceholder() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            for (String form : List.of("bom", "json", "untyped", "untyped-chunked", "lenient")) {
                Curl.Result r = curl(https, "/sse-forms?form=" + form, "-N", "-H",
                        "X-Reflect: " + placeholder("API_TOKEN"));
                assertEquals(200, r.status(), r.toString());
                String body = r.body().substring(r.body().lastIndexOf("\r\n\r\n") + 4); // after the last head
                String text = clientText(body);
                assertFalse(text.contains(API_TOKEN), form + ": a client joining the events read the value: " + body);
                assertEquals("key " + placeholder("API_TOKEN") + " tail", text, form + ": " + body);
                assertEquals(API_TOKEN, (https ? tls : plain).take().header("x-reflect"), "the upstream got the value");
            }
        }
    }

    /**
     * {@return what a token-stream client joins from an event stream}: WHATWG parsing (a leading U+FEFF dropped, the
     * {@code data} lines of an event joined with LF), then the JSON string values that are not keys, or the raw data
     */
    private static String clientText(String stream) {
        String s = stream.startsWith("\uFEFF") ? stream.substring(1) : stream;
        StringBuilder text = new StringBuilder();
        for (String event : s.split("\n\n")) {
            String data = event.lines().filter(l -> l.startsWith("data:"))
                    .map(l -> l.substring(l.startsWith("data: ") ? 6 : 5))
                    .collect(java.util.stream.Collectors.joining("\n"));
            if (!data.startsWith("{")) {
                text.append(data);
                continue;
            }
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"(\\s*:)?")
                    .matcher(data);
            while (m.find()) {
                if (m.group(2) == null) {
                    text.append(m.group(1));
                }
            }
        }
        return text.toString();
    }

    @Test
    @Order(2)
    void cookieAndBasicCredentialsComeBackAsPlaceholders() throws Exception {
        Curl.Result cookie = curl(true, "/anything", "-H", "Cookie: s=" + placeholder("COOKIE_TOKEN"));
        assertNoSecret(cookie);
        assertTrue(lower(cookie).contains("x-echo-cookie: s=" + placeholder("COOKIE_TOKEN")), cookie.body());
        assertEquals("s=" + COOKIE_TOKEN, tls.take().header("cookie"));

        Curl.Result basic = curl(false, "/basic", "-u", "alice:" + placeholder("BASIC_PASS"));
        assertEquals(401, basic.status());
        assertNoSecret(basic);
        assertTrue(basic.body().contains("\"decoded\":\"alice:" + placeholder("BASIC_PASS") + "\""), basic.body());
        String sent = plain.take().header("authorization");
        assertEquals("Basic " + Base64.getEncoder().encodeToString(("alice:" + BASIC_PASS)
                .getBytes(StandardCharsets.UTF_8)), sent, "the upstream got the re-encoded Basic credentials");
    }

    @Test
    @Order(3)
    void aQueryEchoedInARedirectLocationIsNotHandedToTheSandbox() throws Exception {
        Curl.Result r = curl(false, "/redirect?to=http%3A%2F%2Fother.test%2F%3Fk%3D"
                + "openshell%3Aresolve%3Aenv%3AAPI_TOKEN");
        assertEquals(302, r.status(), r.toString());
        assertNoSecret(r);
        assertTrue(r.body().contains("Location: http://other.test/?k=" + placeholder("API_TOKEN")), r.body());
        assertTrue(plain.take().query().contains(percent(API_TOKEN)), "the upstream got the value in the query");

        Curl.Result echoed = curl(true, "/anything?key=" + placeholder("API_TOKEN"));
        assertNoSecret(echoed);
        assertTrue(echoed.body().contains("\"query\":\"key=" + placeholder("API_TOKEN") + "\""), echoed.body());
        assertEquals("key=" + percent(API_TOKEN), tls.take().query());
    }

    @Test
    @Order(4)
    void chunkedGzipAndCloseDelimitedBodiesAreScrubbed() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            EchoUpstream up = https ? tls : plain;
            Curl.Result chunked = curl(https, "/chunked", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
            assertNoSecret(chunked);
            assertTrue(lower(chunked).contains("\"x-reflect\":\"" + placeholder("API_TOKEN") + "\""),
                    "a value split over 3-byte chunks: " + chunked.body());
            up.take();

            Curl.Result gzip = curl(https, "/gzip", "--compressed", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
            assertEquals(200, gzip.status(), gzip.toString());
            assertNoSecret(gzip);
            assertTrue(lower(gzip).contains("\"x-reflect\":\"" + placeholder("API_TOKEN") + "\""), gzip.body());
            assertFalse(gzip.body().toLowerCase(java.util.Locale.ROOT).contains("content-encoding:"),
                    "sent decoded: " + gzip.body());
            String accept = up.take().header("accept-encoding");
            assertFalse(accept.contains("br") || accept.contains("zstd"), "narrowed to what is decoded: " + accept);

            Curl.Result close = curl(https, "/close", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
            assertNoSecret(close);
            assertTrue(lower(close).contains("\"x-reflect\":\"" + placeholder("API_TOKEN") + "\""), close.body());
            up.take();
        }
    }

    @Test
    @Order(5)
    void aBodyInACodingTheSupervisorCannotScanIsRefused() throws Exception {
        Curl.Result r = curl(true, "/brotli", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
        assertEquals(502, r.status(), r.toString());
        assertTrue(r.body().contains("\"error\":\"response_uninspectable\""), r.body());
        assertNoSecret(r);
        tls.take();
    }

    /** A declared charset the scrub cannot read the value in (UTF-7) is refused as an unscannable coding is. */
    @Test
    @Order(5)
    void aBodyInACharsetTheSupervisorCannotReadIsRefused() throws Exception {
        Curl.Result r = curl(true, "/utf7", "-H", "X-Reflect: " + placeholder("API_TOKEN"));
        assertEquals(502, r.status(), r.toString());
        assertTrue(r.body().contains("\"error\":\"response_uninspectable\""), r.body());
        assertTrue(r.body().contains("charset"), r.body());
        tls.take();
    }

    @Test
    @Order(100)
    void eachScrubIsAHighFindingAndAMetricAndNoValueReachesAnyOutput() throws Exception {
        String metrics = supervisor.metrics();
        assertTrue(metrics.contains("supervisor_response_scrubs_total{credential=\"API_TOKEN\"}"), metrics);
        assertTrue(metrics.contains("supervisor_response_scrubs_total{credential=\"BASIC_PASS\"}"), metrics);
        assertTrue(metrics.contains("supervisor_failures_total{code=\"response_uninspectable\"}"), metrics);
        List<JsonObject> scrubs = supervisor.auditEvents().stream().filter(e -> e.getInt("class_uid", 0) == 2004
                && e.getJsonObject("finding_info").getJsonArray("types").getString(0)
                .equals("credential.response_scrubbed")).toList();
        assertTrue(scrubs.size() >= 10, "one finding per scrubbed response: " + scrubs.size());
        assertTrue(scrubs.stream().allMatch(e -> e.getInt("severity_id") == 4), "High");
        supervisor.close();
        Map<String, String> outputs = Map.of("standard output", supervisor.stdout(), "standard error",
                supervisor.stderr(), "audit log", supervisor.auditText(), "/metrics", metrics,
                "responses to the sandbox", String.join("\n", SANDBOX_SAW));
        List<String> forms = secretForms();
        for (var o : outputs.entrySet()) {
            for (int i = 0; i < forms.size(); i++) {
                assertFalse(o.getValue().contains(forms.get(i)), o.getKey() + " holds secret form #" + i);
            }
        }
    }
}
