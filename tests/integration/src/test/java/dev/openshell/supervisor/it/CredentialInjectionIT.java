package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.proto.v1.HttpHeader;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import jakarta.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Credential injection and {@code openshell/sigv4} through {@code supervisor run} as a process (issue 7): the sandbox
 * sends placeholders, the upstream (loopback, recording) receives the real values, an external stage that records
 * everything it is shown sees only placeholders, a SigV4 request verifies at the upstream with an independent
 * verifier, and no secret value appears in the supervisor's standard output, standard error, audit log, metrics or
 * client-visible errors.
 *
 * <p>Credentials (random per run, given to the supervisor through its environment and one file): {@code API_TOKEN},
 * {@code BASIC_PASS} and {@code FILE_TOKEN} bound to {@code api.test}; {@code OTHER_TOKEN} bound to
 * {@code other.test}; {@code AWS_ACCESS_KEY_ID} and {@code AWS_SECRET_ACCESS_KEY} bound to {@code *.aws.test}, where
 * {@code openshell/sigv4} signs for service {@code sqs} in {@code eu-west-1}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CredentialInjectionIT {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** Needs percent-encoding in a query ({@code /} and {@code +}). */
    static final String API_TOKEN = "it/api+" + hex(12);
    static final String BASIC_PASS = "it-basic-" + hex(12);
    static final String FILE_TOKEN = "it-file-" + hex(12);
    static final String OTHER_TOKEN = "it-other-" + hex(12);
    static final String AWS_ACCESS_KEY_ID = "AKIAIT" + hex(7).toUpperCase(Locale.ROOT);
    static final String AWS_SECRET_ACCESS_KEY = awsSecret();
    static final String REGION = "eu-west-1";
    static final String FAKE_OPENAI_KEY = SupervisorPrivacyGuardIT.FAKE_KEY;

    @TempDir
    static Path work;

    private static Upstream upstream;
    private static MiddlewareDouble recorder;
    private static StackProcess supervisor;
    /** Every response body the sandbox got, for the secret scan. */
    private static final List<String> CLIENT_SAW = new CopyOnWriteArrayList<>();

    static String hex(int bytes) {
        byte[] b = new byte[bytes];
        RANDOM.nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    private static String awsSecret() {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 40; i++) {
            b.append(alphabet.charAt(RANDOM.nextInt(alphabet.length())));
        }
        return b.toString();
    }

    static String placeholder(String name) {
        return "openshell:resolve:env:" + name;
    }

    private static String basic(String userPass) {
        return "Basic " + Base64.getEncoder().encodeToString(userPass.getBytes(StandardCharsets.UTF_8));
    }

    /** RFC 3986 percent-encoding, unreserved characters kept (how the supervisor puts a value into a query). */
    static String percent(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xff;
            if (Character.isLetterOrDigit(c) && c < 0x80 || c == '-' || c == '.' || c == '_' || c == '~') {
                b.append((char) c);
            } else {
                b.append('%').append(String.format("%02X", c));
            }
        }
        return b.toString();
    }

    private static SigV4Verifier.Key awsKey() {
        return new SigV4Verifier.Key(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, REGION, "sqs");
    }

    @BeforeAll
    static void start() throws Exception {
        upstream = Upstream.start(r -> {
            String host = r.headers().getOrDefault("host", List.of("")).get(0).replaceFirst(":\\d+$", "");
            if (!host.endsWith(".aws.test")) {
                return 200;
            }
            return SigV4Verifier.verify(awsKey(), r.method(), r.rawPath(), r.rawQuery(), r.headers(), r.body())
                    .valid() ? 200 : 403;
        });
        recorder = MiddlewareDouble.start("tests/recorder");
        Path tokenFile = Files.writeString(work.resolve("file-token"), FILE_TOKEN + "\n");
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "api.test" = "127.0.0.1"
                "other.test" = "127.0.0.1"
                "sqs.aws.test" = "127.0.0.1"
                "unsigned.aws.test" = "127.0.0.1"
                "unbound.test" = "127.0.0.1"

                [[openshell.supervisor.middleware]]
                name = "recorder"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_body_bytes = 1048576
                timeout = "5s"
                allow_insecure = true

                [[openshell.supervisor.credentials]]
                name = "API_TOKEN"
                source = "env:IT_API_TOKEN"
                hosts = ["api.test"]
                query_params = ["key", "alt"]
                allow_plaintext = true

                [[openshell.supervisor.credentials]]
                name = "BASIC_PASS"
                source = "env:IT_BASIC_PASS"
                hosts = ["api.test"]
                basic = ["password"]
                allow_plaintext = true

                [[openshell.supervisor.credentials]]
                name = "FILE_TOKEN"
                source = "file:%s"
                hosts = ["api.test"]
                allow_plaintext = true

                [[openshell.supervisor.credentials]]
                name = "TLS_ONLY"
                source = "env:IT_OTHER_TOKEN"
                hosts = ["api.test"]

                [[openshell.supervisor.credentials]]
                name = "PORT_PINNED"
                source = "env:IT_OTHER_TOKEN"
                hosts = ["api.test"]
                allow_plaintext = true
                ports = [1]

                [[openshell.supervisor.credentials]]
                name = "HEADER_PINNED"
                source = "env:IT_OTHER_TOKEN"
                hosts = ["api.test"]
                allow_plaintext = true
                headers = ["X-Api-Key"]

                [[openshell.supervisor.credentials]]
                name = "OTHER_TOKEN"
                source = "env:IT_OTHER_TOKEN"
                hosts = ["other.test"]
                allow_plaintext = true

                [[openshell.supervisor.credentials]]
                name = "AWS_ACCESS_KEY_ID"
                source = "env:IT_AWS_ACCESS_KEY_ID"
                hosts = ["*.aws.test"]
                query_params = ["Ref"]
                allow_plaintext = true

                [[openshell.supervisor.credentials]]
                name = "AWS_SECRET_ACCESS_KEY"
                source = "env:IT_AWS_SECRET_ACCESS_KEY"
                hosts = ["*.aws.test"]
                allow_plaintext = true
                """.formatted(recorder.port(), tokenFile.toAbsolutePath()));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  apis:
                    endpoints:
                      - { host: api.test, port: %1$d }
                      - { host: other.test, port: %1$d }
                      - { host: "*.aws.test", port: %1$d }
                      - { host: unbound.test, port: %1$d }
                network_middlewares:
                  recorder:
                    middleware: tests/recorder
                    order: 10
                    endpoints: { include: [api.test, other.test, "*.aws.test"] }
                  secrets:
                    middleware: openshell/regex
                    order: 20
                    config: { mode: redact }
                    endpoints: { include: ["*.aws.test"] }
                  signer:
                    middleware: openshell/sigv4
                    order: 30
                    config: { service: sqs, region: %2$s }
                    endpoints: { include: [sqs.aws.test] }
                  signer-unsigned:
                    middleware: openshell/sigv4
                    order: 40
                    config: { service: sqs, region: %2$s, payload: unsigned, content_sha256_header: true }
                    endpoints: { include: [unsigned.aws.test] }
                  signer-unbound:
                    middleware: openshell/sigv4
                    order: 50
                    config: { service: sqs, region: %2$s }
                    endpoints: { include: [unbound.test] }
                """.formatted(upstream.port(), REGION));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of(
                "IT_API_TOKEN", API_TOKEN, "IT_BASIC_PASS", BASIC_PASS, "IT_OTHER_TOKEN", OTHER_TOKEN,
                "IT_AWS_ACCESS_KEY_ID", AWS_ACCESS_KEY_ID, "IT_AWS_SECRET_ACCESS_KEY", AWS_SECRET_ACCESS_KEY));
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {supervisor, recorder, upstream}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // keep closing the rest
            }
        }
    }

    private static HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
        HttpResponse<String> r = supervisor.send(b.timeout(Duration.ofSeconds(30)).build());
        CLIENT_SAW.add(r.body());
        return r;
    }

    private static HttpRequest.Builder get(String url, String... headers) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).GET();
        return headers.length == 0 ? b : b.headers(headers);
    }

    private static String api(String pathAndQuery) {
        return "http://api.test:" + upstream.port() + pathAndQuery;
    }

    private static void assertRefused(HttpResponse<String> r, String code, String credential) throws Exception {
        assertEquals(403, r.statusCode(), r.body());
        JsonObject body = StackProcess.json(r);
        assertEquals(code, body.getString("error"), r.body());
        if (credential != null) {
            assertFalse(r.body().contains(credential), "the client's refusal names no credential: " + r.body());
            assertTrue(supervisor.auditText().contains(credential), "the operator's audit event names it");
        }
        assertFalse(r.body().contains("api.test") || r.body().contains("other.test") || r.body().contains("aws"),
                "the client's refusal names no bound host: " + r.body());
        assertTrue(upstream.nothingReceived(), "a refused request never reaches the upstream");
    }

    @Test
    @Order(1)
    void placeholdersInHeadersAndTheQueryAreReplacedForTheBoundHost() throws Exception {
        String body = "{\"note\":\"" + placeholder("API_TOKEN") + " stays in the body\"}";
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create(api("/v1/items?key="
                        + placeholder("API_TOKEN") + "&page=2&alt=openshell%3Aresolve%3Aenv%3AAPI_TOKEN")))
                .header("Authorization", "Bearer " + placeholder("API_TOKEN"))
                .header("X-File-Token", placeholder("FILE_TOKEN"))
                .header("X-Pair", placeholder("API_TOKEN") + ";" + placeholder("FILE_TOKEN"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)));
        assertEquals(200, r.statusCode(), r.body());

        Upstream.Received got = upstream.take();
        assertEquals("Bearer " + API_TOKEN, got.header("authorization"));
        assertEquals(FILE_TOKEN, got.header("x-file-token"), "file: source, trailing line break removed");
        assertEquals(API_TOKEN + ";" + FILE_TOKEN, got.header("x-pair"));
        assertEquals("key=" + percent(API_TOKEN) + "&page=2&alt=" + percent(API_TOKEN), got.rawQuery());
        assertEquals("/v1/items", got.rawPath());
        assertEquals(body, got.text(), "placeholders in a body are not credentials: never replaced");
    }

    @Test
    @Order(2)
    void aPlaceholderInsideBasicCredentialsIsReplacedAndReEncoded() throws Exception {
        HttpResponse<String> r = send(get(api("/v1/login"), "Authorization",
                basic("alice:" + placeholder("BASIC_PASS")), "X-Upstream-Auth", basic("alice:"
                        + placeholder("BASIC_PASS"))));
        assertEquals(200, r.statusCode(), r.body());
        Upstream.Received got = upstream.take();
        assertEquals(basic("alice:" + BASIC_PASS), got.header("authorization"));
        assertEquals(basic("alice:" + placeholder("BASIC_PASS")), got.header("x-upstream-auth"),
                "Basic credentials are recognised in Authorization only");
    }

    @Test
    @Order(3)
    void aPlaceholderWhereItsRuleDoesNotPlaceItIsRefusedWithoutNamingIt() throws Exception {
        assertRefused(send(get(api("/"), "X-Other", placeholder("HEADER_PINNED"))),
                "credential_placement_not_allowed", "HEADER_PINNED");
        assertRefused(send(get(api("/"), "Cookie", "s=" + placeholder("API_TOKEN"))),
                "credential_placement_not_allowed", "API_TOKEN");
        assertRefused(send(get(api("/?other=" + placeholder("API_TOKEN")))), "credential_placement_not_allowed",
                "API_TOKEN");
        assertRefused(send(get(api("/"), "Authorization", basic(placeholder("BASIC_PASS") + ":pw"))),
                "credential_placement_not_allowed", "BASIC_PASS");
        assertRefused(send(get(api("/"), "X-Key", placeholder("TLS_ONLY"))), "credential_plaintext_not_allowed",
                "TLS_ONLY");
        assertRefused(send(get(api("/"), "X-Key", placeholder("PORT_PINNED"))), "credential_port_not_allowed",
                "PORT_PINNED");
        HttpResponse<String> ok = send(get(api("/"), "X-Api-Key", placeholder("HEADER_PINNED")));
        assertEquals(200, ok.statusCode(), ok.body());
        assertEquals(OTHER_TOKEN, upstream.take().header("x-api-key"), "the listed header carries it");
    }

    @Test
    @Order(3)
    void traceIsAnsweredByTheSupervisorAndMaxForwardsZeroOptionsLocally() throws Exception {
        HttpResponse<String> trace = send(HttpRequest.newBuilder(URI.create(api("/"))).method("TRACE",
                HttpRequest.BodyPublishers.noBody()).header("X-Key", placeholder("API_TOKEN")));
        assertEquals(405, trace.statusCode(), trace.body());
        assertTrue(trace.headers().firstValue("allow").isPresent(), "405 carries Allow (RFC 9110 15.5.6)");
        assertTrue(upstream.nothingReceived(), "TRACE never reaches the upstream");
        HttpResponse<String> options = send(HttpRequest.newBuilder(URI.create(api("/"))).method("OPTIONS",
                HttpRequest.BodyPublishers.noBody()).header("Max-Forwards", "0"));
        assertEquals(200, options.statusCode(), options.body());
        assertTrue(upstream.nothingReceived(), "Max-Forwards: 0 is answered by the supervisor");
        HttpResponse<String> forwarded = send(HttpRequest.newBuilder(URI.create(api("/"))).method("OPTIONS",
                HttpRequest.BodyPublishers.noBody()).header("Max-Forwards", "3"));
        assertEquals(200, forwarded.statusCode(), forwarded.body());
        assertEquals("2", upstream.take().header("max-forwards"), "decremented when forwarded (RFC 9110 7.6.2)");
    }

    @Test
    @Order(3)
    void aCredentialIsSentOnlyToItsOwnHosts() throws Exception {
        HttpResponse<String> own = send(get("http://other.test:" + upstream.port() + "/", "Authorization",
                "Bearer " + placeholder("OTHER_TOKEN")));
        assertEquals(200, own.statusCode(), own.body());
        assertEquals("Bearer " + OTHER_TOKEN, upstream.take().header("authorization"));

        assertRefused(send(get("http://other.test:" + upstream.port() + "/", "Authorization",
                "Bearer " + placeholder("API_TOKEN"))), "credential_host_not_allowed", "API_TOKEN");
        assertRefused(send(get(api("/"), "X-Key", placeholder("OTHER_TOKEN"))), "credential_host_not_allowed",
                "OTHER_TOKEN");
        assertRefused(send(get(api("/?k=" + placeholder("OTHER_TOKEN")))), "credential_host_not_allowed",
                "OTHER_TOKEN");
        assertRefused(send(get(api("/"), "Authorization", basic("bob:" + placeholder("AWS_SECRET_ACCESS_KEY")))),
                "credential_host_not_allowed", "AWS_SECRET_ACCESS_KEY");
    }

    @Test
    @Order(4)
    void unknownAndMalformedPlaceholdersAreRefused() throws Exception {
        assertRefused(send(get(api("/"), "X-Key", placeholder("NOT_DECLARED"))), "credential_unknown",
                "NOT_DECLARED");
        assertRefused(send(get(api("/?k=openshell%3Aresolve%3Aenv%3ANOT_DECLARED"))), "credential_unknown",
                "NOT_DECLARED");
        assertRefused(send(get(api("/"), "Authorization", "Bearer openshell:resolve:vault:API_TOKEN")),
                "credential_placeholder_invalid", null);
        assertRefused(send(get(api("/?k=openshell:resolve:env:"))), "credential_placeholder_invalid", null);
    }

    @Test
    @Order(5)
    void aSigV4RequestIsSignedAfterTheChainAndVerifiesAtTheUpstream() throws Exception {
        String sandboxDate = "20000101T000000Z";
        String body = "{\"QueueUrl\":\"q\",\"MessageBody\":\"deploy with " + FAKE_OPENAI_KEY + "\"}";
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create("http://sqs.aws.test:" + upstream.port()
                        + "/123456789012/queue%20one?Action=SendMessage&Version=2012-11-05&Note=a%20b%2Bc"
                        + "&Ref=openshell%3Aresolve%3Aenv%3AAWS_ACCESS_KEY_ID"))
                .header("Content-Type", "application/x-amz-json-1.0")
                .header("X-Amz-Target", "AmazonSQS.SendMessage")
                .header("X-Amz-Date", sandboxDate)
                .header("X-Amz-Security-Token", "stale-sandbox-token")
                // what an SDK configured with placeholder keys sends: a signature the supervisor replaces
                .header("Authorization", SigV4Verifier.ALGORITHM + " Credential=" + placeholder("AWS_ACCESS_KEY_ID")
                        + "/20000101/" + REGION + "/sqs/aws4_request, SignedHeaders=host;x-amz-date, Signature="
                        + "0".repeat(64))
                .POST(HttpRequest.BodyPublishers.ofString(body)));
        Upstream.Received got = upstream.take();
        assertEquals(200, r.statusCode(), "the upstream's verifier refused the signature: " + r.body());

        SigV4Verifier.Verdict v = SigV4Verifier.verify(awsKey(), got.method(), got.rawPath(), got.rawQuery(),
                got.headers(), got.body());
        assertTrue(v.valid(), v.problem() + "\n" + v.canonicalRequest());
        assertEquals(List.of("content-type", "host", "x-amz-date", "x-amz-target"), v.signedHeaders());
        assertTrue(got.header("authorization").startsWith(SigV4Verifier.ALGORITHM + " Credential="
                + AWS_ACCESS_KEY_ID + "/"), "exactly one Authorization, the supervisor's");
        Instant signedAt = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC)
                .parse(got.header("x-amz-date"), Instant::from);
        assertTrue(Duration.between(signedAt, Instant.now()).abs().compareTo(Duration.ofMinutes(5)) < 0,
                "signed now, not with the sandbox's date " + sandboxDate);
        assertFalse(got.headers().containsKey("x-amz-security-token"), "the sandbox's token is stripped");
        assertTrue(got.rawQuery().endsWith("&Ref=" + AWS_ACCESS_KEY_ID), "the query is signed as injected");
        assertFalse(got.text().contains(FAKE_OPENAI_KEY), "openshell/regex ran before signing");
        assertTrue(got.text().contains("[REDACTED:openai_api_key]"), got.text());
        assertFalse(SigV4Verifier.verify(new SigV4Verifier.Key(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY + "x",
                REGION, "sqs"), got.method(), got.rawPath(), got.rawQuery(), got.headers(), got.body()).valid(),
                "the verifier checks the secret");

        HttpResponse<String> unsigned = send(HttpRequest.newBuilder(URI.create("http://unsigned.aws.test:"
                        + upstream.port() + "/"))
                .header("Content-Type", "application/x-amz-json-1.0")
                .POST(HttpRequest.BodyPublishers.ofString("{\"QueueName\":\"q\"}")));
        Upstream.Received u = upstream.take();
        assertEquals(200, unsigned.statusCode(), unsigned.body());
        assertEquals("UNSIGNED-PAYLOAD", u.header("x-amz-content-sha256"));
        assertTrue(SigV4Verifier.verify(awsKey(), u.method(), u.rawPath(), u.rawQuery(), u.headers(), u.body())
                .valid());
    }

    @Test
    @Order(6)
    void signingForAHostTheAwsCredentialsAreNotBoundToFailsClosed() throws Exception {
        HttpResponse<String> r = send(HttpRequest.newBuilder(URI.create("http://unbound.test:" + upstream.port()
                + "/")).header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{}")));
        assertEquals(403, r.statusCode(), r.body());
        JsonObject body = StackProcess.json(r);
        assertEquals("middleware_failed", body.getString("error"));
        assertEquals("middleware_failed: credential_unavailable", body.getString("detail"));
        assertTrue(upstream.nothingReceived());
        assertTrue(supervisor.auditDetails().stream().anyMatch(d -> "signer-unbound".equals(d.getString(
                "config_key", "")) && "deny".equals(d.getString("decision", ""))
                && "credential_unavailable".equals(d.getString("code", ""))), "audited as a failed stage");
        assertTrue(supervisor.auditDetails().stream().anyMatch(d -> "signer".equals(d.getString("config_key", ""))
                && "allowed".equals(d.getString("decision", ""))), "the signing stage is audited");
    }

    @Test
    @Order(7)
    void aMiddlewareStageSeesOnlyPlaceholders() {
        List<HttpRequestEvaluation> seen = recorder.evaluations;
        assertTrue(seen.size() >= 8, "the recording stage ran on every request: " + seen.size());
        for (HttpRequestEvaluation e : seen) {
            String everything = e.toString() + new String(e.toByteArray(), StandardCharsets.ISO_8859_1);
            for (String secret : secretForms()) {
                assertFalse(everything.contains(secret), "a middleware stage saw a secret value");
            }
        }
        // credential-bearing fields (Authorization, Cookie, X-Amz-*) are not even shown to middleware
        assertTrue(seen.stream().allMatch(e -> e.getHeadersList().stream().map(h -> h.getName().toLowerCase(
                Locale.ROOT)).noneMatch(n -> n.equals("authorization") || n.startsWith("x-amz-"))));
        assertTrue(seen.stream().anyMatch(e -> e.getTarget().getQuery().equals("key=" + placeholder("API_TOKEN")
                + "&page=2&alt=openshell%3Aresolve%3Aenv%3AAPI_TOKEN")
                && header(e, "x-file-token").equals(Optional.of(placeholder("FILE_TOKEN")))
                && header(e, "x-pair").equals(Optional.of(placeholder("API_TOKEN") + ";"
                        + placeholder("FILE_TOKEN")))), "the stage saw the placeholders in the query and headers");
        assertTrue(seen.stream().anyMatch(e -> header(e, "x-upstream-auth").equals(Optional.of(basic("alice:"
                + placeholder("BASIC_PASS"))))), "the stage saw Basic credentials holding the placeholder");
    }

    private static Optional<String> header(HttpRequestEvaluation e, String name) {
        return e.getHeadersList().stream().filter(h -> h.getName().equalsIgnoreCase(name)).map(HttpHeader::getValue)
                .findFirst();
    }

    /** Each secret as it could appear: as is, percent-encoded, base64 (alone and in Basic credentials). */
    private static List<String> secretForms() {
        List<String> forms = new ArrayList<>();
        for (String s : List.of(API_TOKEN, BASIC_PASS, FILE_TOKEN, OTHER_TOKEN, AWS_ACCESS_KEY_ID,
                AWS_SECRET_ACCESS_KEY)) {
            forms.add(s);
            forms.add(percent(s));
            forms.add(Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8)));
        }
        forms.add(basic("alice:" + BASIC_PASS).substring("Basic ".length()));
        return forms;
    }

    @Test
    @Order(8)
    void aCredentialWhoseValueHoldsALineBreakStopsStartUpWithoutShowingIt() throws Exception {
        Path dir = Files.createTempDirectory(work, "unsafe");
        String part1 = "unsafe-" + hex(8);
        String part2 = "unsafe-" + hex(8);
        Path secret = Files.writeString(dir.resolve("secret"), part1 + "\n" + part2 + "\n");
        Path gateway = Files.writeString(dir.resolve("gateway.toml"), """
                [[openshell.supervisor.credentials]]
                name = "MULTILINE"
                source = "file:%s"
                hosts = ["api.test"]
                """.formatted(secret.toAbsolutePath()));
        Path policy = Files.writeString(dir.resolve("policy.yaml"), "version: 1\n");
        Image.Run run = Image.run(Image.HOME, "run", "--policy", policy.toString(), "--gateway-config",
                gateway.toString(), "--listen", "127.0.0.1:0", "--admin-listen", "off", "--state-dir",
                dir.resolve("state").toString(), "--audit-log", dir.resolve("audit.jsonl").toString());
        assertEquals(1, run.exit(), run.err());
        assertTrue(run.err().contains("credential 'MULTILINE'") && run.err().contains("CR, LF or NUL"), run.err());
        String all = run.out() + run.err() + (Files.exists(dir.resolve("audit.jsonl"))
                ? Files.readString(dir.resolve("audit.jsonl")) : "");
        assertFalse(all.contains(part1) || all.contains(part2), "the value is never shown");
    }

    @Test
    @Order(100)
    void noSecretValueAppearsInAnyLogAuditLineMetricOrClientError() throws Exception {
        String metrics = supervisor.metrics();
        assertTrue(metrics.contains("supervisor_failures_total{code=\"credential_host_not_allowed\"}"), metrics);
        supervisor.close(); // everything written, including shutdown logging
        String stdout = supervisor.stdout();
        String stderr = supervisor.stderr();
        String audit = supervisor.auditText();
        assertTrue(stdout.contains("supervisor listening on"), "the scan reads the real output");
        assertTrue(audit.contains("\"config_key\":\"recorder\""), "the scan reads the real audit log");
        Map<String, String> outputs = Map.of("standard output", stdout, "standard error", stderr,
                "audit log", audit, "/metrics", metrics, "responses to the sandbox", String.join("\n", CLIENT_SAW));
        List<String> forms = secretForms();
        for (var o : outputs.entrySet()) {
            for (int i = 0; i < forms.size(); i++) {
                assertFalse(o.getValue().contains(forms.get(i)), o.getKey() + " holds secret form #" + i);
            }
        }
    }
}
