package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import jakarta.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * Binary-scoped network policy through {@code supervisor run} as a process (issue 16): the supervisor ties each client
 * connection to its process through {@code /proc} and admits a policy's endpoints only for the binaries it lists.
 * Clients are copies of {@code curl} and {@code python3} in a temporary directory (so a test can replace one), run
 * by this JVM and sending through the proxy to a recording loopback upstream.
 *
 * <p>Policies: {@code curl_only} (host {@code curl.test}, binaries: the curl copy), {@code interpreter}
 * ({@code py.test}, the python copy), {@code script_only} ({@code script.test}, the client script's own path, which
 * must never grant access), {@code tools} ({@code glob.test}, {@code <dir>/tools/*}{@code /bin/fetch}),
 * {@code replaceable} ({@code replaced.test}, {@code <dir>/bin/agent}), and {@code echo} ({@code echo.test}, no
 * binaries) with the fixture plugin {@code fixtures/process-echo} and a recording external service, which both see
 * {@code originating_process}.
 */
@EnabledOnOs(OS.LINUX)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class BinaryScopingIT {
    private static final String CLIENT_PY = """
            import sys, urllib.request, urllib.error
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({'http': sys.argv[1]}))
            try:
                r = opener.open(sys.argv[2], timeout=30)
                print(r.status)
                print(r.read().decode())
            except urllib.error.HTTPError as e:
                print(e.code)
                print(e.read().decode())
            """;

    @TempDir
    static Path work;

    private static Path bin;
    private static Path curl;
    private static Path python;
    private static Path script;
    private static Upstream upstream;
    private static MiddlewareDouble recorder;
    private static StackProcess supervisor;

    /** One client run: HTTP status (0 when none) and the response body. */
    record Reply(int status, String body) {
    }

    @BeforeAll
    static void start() throws Exception {
        Path realCurl = Curl.binary();
        Path realPython = Path.of("/usr/bin/python3");
        assumeTrue(Files.isExecutable(realPython), "needs python3");
        bin = Files.createDirectories(work.resolve("bin"));
        curl = Files.copy(realCurl.toRealPath(), bin.resolve("curl"));
        python = Files.copy(realPython.toRealPath(), bin.resolve("python3"));
        Files.copy(realCurl.toRealPath(), bin.resolve("agent"));
        Path tools = Files.createDirectories(work.resolve("tools").resolve("a").resolve("bin"));
        Files.copy(realCurl.toRealPath(), tools.resolve("fetch"));
        Path deeper = Files.createDirectories(work.resolve("tools").resolve("a").resolve("b").resolve("bin"));
        Files.copy(realCurl.toRealPath(), deeper.resolve("fetch"));
        script = Files.writeString(work.resolve("client.py"), CLIENT_PY);

        upstream = Upstream.start();
        recorder = MiddlewareDouble.start("tests/recorder");
        Path plugins = Files.createDirectories(work.resolve("plugins"));
        Path echo = Files.copy(Image.plugin("fixture-process-echo"), plugins.resolve("fixture-process-echo.jar"));
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "curl.test" = "127.0.0.1"
                "py.test" = "127.0.0.1"
                "script.test" = "127.0.0.1"
                "glob.test" = "127.0.0.1"
                "replaced.test" = "127.0.0.1"
                "echo.test" = "127.0.0.1"
                "scan.test" = "127.0.0.1"

                [[openshell.supervisor.middleware]]
                name = "recorder"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_body_bytes = 1048576
                timeout = "5s"
                allow_insecure = true
                """.formatted(recorder.port()) + Image.pins(echo));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  curl_only:
                    endpoints: [{ host: curl.test, port: %1$d }]
                    binaries: [{ path: "%2$s" }]
                  interpreter:
                    endpoints: [{ host: py.test, port: %1$d }]
                    binaries: [{ path: "%3$s" }]
                  script_only:
                    endpoints: [{ host: script.test, port: %1$d }]
                    binaries: [{ path: "%4$s" }]
                  tools:
                    endpoints: [{ host: glob.test, port: %1$d }]
                    binaries: [{ path: "%5$s/tools/*/bin/fetch" }]
                  replaceable:
                    endpoints: [{ host: replaced.test, port: %1$d }]
                    binaries: [{ path: "%6$s" }]
                  echo:
                    endpoints: [{ host: echo.test, port: %1$d }]
                  scan:
                    endpoints: [{ host: scan.test, port: %1$d }]
                network_middlewares:
                  secrets:
                    middleware: openshell/regex
                    order: 5
                    config: { mode: redact }
                    endpoints: { include: [scan.test] }
                  echo:
                    middleware: fixtures/process-echo
                    order: 10
                    endpoints: { include: [echo.test] }
                  recorder:
                    middleware: tests/recorder
                    order: 20
                    endpoints: { include: [echo.test] }
                """.formatted(upstream.port(), curl, python, script, work, bin.resolve("agent")));
        supervisor = StackProcess.start(work, policy, gateway, Map.of()); // work/plugins holds the fixture
    }

    @AfterAll
    static void stop() throws Exception {
        if (supervisor != null) {
            supervisor.close();
        }
        if (recorder != null) {
            recorder.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    private static String proxy() {
        return "http://127.0.0.1:" + supervisor.port();
    }

    private static String url(String host) {
        return "http://" + host + ":" + upstream.port() + "/probe";
    }

    private static Reply run(List<String> command) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD);
        for (String v : List.of("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                "no_proxy", "NO_PROXY")) {
            pb.environment().remove(v);
        }
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("client did not finish: " + command);
        }
        return parse(out);
    }

    private static Reply parse(String out) {
        String[] lines = out.split("\n", 2);
        int status = lines[0].trim().matches("\\d{3}") ? Integer.parseInt(lines[0].trim()) : 0;
        return new Reply(status, lines.length > 1 ? lines[1] : "");
    }

    /** Runs a copy of curl through the proxy: the status and the body. */
    private static Reply curlReply(Path binary, String host) throws IOException, InterruptedException {
        Path body = Files.createTempFile(work, "body", ".txt");
        List<String> cmd = new ArrayList<>(List.of(binary.toString(), "-q", "-sS", "--max-time", "30", "-x", proxy(),
                "-o", body.toString(), "-w", "%{http_code}", url(host)));
        Reply r = run(cmd);
        return new Reply(r.status(), Files.readString(body));
    }

    private static Reply py(Path interpreter, String host) throws IOException, InterruptedException {
        return run(List.of(interpreter.toString(), script.toString(), proxy(), url(host)));
    }

    @Test
    @Order(1)
    void aPolicyScopedToCurlAdmitsCurlAndRefusesPython() throws Exception {
        Reply ok = curlReply(curl, "curl.test");
        assertEquals(200, ok.status(), ok::toString);
        assertEquals("/probe", upstream.take().rawPath());

        Reply refused = py(python, "curl.test");
        assertEquals(403, refused.status(), refused::toString);
        assertTrue(refused.body().contains("policy_denied"), refused.body());
        assertTrue(refused.body().contains("network policy 'curl_only' allows this host and port only for its listed"
                + " binaries; " + python + " is not one of them"), refused.body());
    }

    @Test
    @Order(2)
    void aScriptIsAdmittedThroughItsInterpreterNeverThroughItsOwnPath() throws Exception {
        Reply viaInterpreter = py(python, "py.test");
        assertEquals(200, viaInterpreter.status(), viaInterpreter::toString);
        upstream.take();
        Reply viaScriptPath = py(python, "script.test");
        assertEquals(403, viaScriptPath.status(), "the script's path is listed, the interpreter is not");
    }

    @Test
    @Order(3)
    void aGlobEntryAdmitsABinaryInAMatchingDirectoryOnly() throws Exception {
        Reply matching = curlReply(work.resolve("tools/a/bin/fetch"), "glob.test");
        assertEquals(200, matching.status(), matching::toString);
        upstream.take();
        Reply deeper = curlReply(work.resolve("tools/a/b/bin/fetch"), "glob.test");
        assertEquals(403, deeper.status(), "* matches one directory level, not two");
    }

    @Test
    @Order(4)
    void theOriginatingProcessReachesAPluginAnExternalServiceAndTheAuditLog() throws Exception {
        Reply ok = curlReply(curl, "echo.test");
        assertEquals(200, ok.status(), ok::toString);
        Upstream.Received r = upstream.take();
        String echoed = r.header("x-openshell-middleware-process");
        assertTrue(echoed.startsWith("curl "), echoed);
        assertTrue(echoed.matches("curl \\d+ \\d+"), echoed);
        HttpRequestEvaluation seen = recorder.evaluations.get(recorder.evaluations.size() - 1);
        assertTrue(seen.getContext().hasOriginatingProcess(), seen.getContext().toString());
        assertEquals(curl.toString(), seen.getContext().getOriginatingProcess().getBinary());
        assertEquals(Long.parseLong(echoed.split(" ")[1]), seen.getContext().getOriginatingProcess().getPid());
        assertEquals(Integer.parseInt(echoed.split(" ")[2]),
                seen.getContext().getOriginatingProcess().getAncestorsCount());

        List<JsonObject> activity = supervisor.auditEvents().stream()
                .filter(e -> e.getInt("class_uid") == 4002 && e.containsKey("actor")).toList();
        assertTrue(!activity.isEmpty(), "HTTP Activity events carry the actor");
        JsonObject process = activity.get(activity.size() - 1).getJsonObject("actor").getJsonObject("process");
        assertEquals(curl.toString(), process.getJsonObject("file").getString("path"));
        assertEquals(64, process.getJsonObject("file").getJsonArray("hashes").getJsonObject(0).getString("value")
                .length());
    }

    @Test
    @Order(5)
    void aBodilessRequestThroughStagesThatSkipAnEmptyBodySearchesNoProcess() throws Exception {
        // issue 23: the /proc search (once per connection) is for stages that may be invoked; openshell/regex
        // skips an empty body, so a GET through it on a fresh connection needs none, and a POST does
        double before = identifications();
        assertEquals(200, curlReply(curl, "scan.test").status());
        assertEquals(before, identifications(), "a GET through openshell/regex alone identifies no process");
        List<String> post = new ArrayList<>(List.of(curl.toString(), "-q", "-sS", "--max-time", "30", "-x", proxy(),
                "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", "hello", url("scan.test")));
        assertEquals(200, run(post).status());
        assertEquals(before + 1, identifications(), "a POST may invoke the stage: its connection is identified");
        upstream.take();
        upstream.take();
    }

    private static double identifications() throws IOException, InterruptedException {
        Curl.Result scrape = Curl.run("http://127.0.0.1:" + supervisor.adminPort() + "/metrics");
        assertEquals(200, scrape.status(), scrape.toString());
        return Prometheus.parse(scrape.body()).find("supervisor_process_identifications_total", Map.of()).stream()
                .mapToDouble(Prometheus.Sample::value).sum();
    }

    @Test
    @Order(6)
    void aBinaryReplacedAfterFirstUseIsRefused() throws Exception {
        Path agent = bin.resolve("agent");
        Reply first = curlReply(agent, "replaced.test");
        assertEquals(200, first.status(), first::toString);
        upstream.take();
        // another program at the same path: python, which can also speak HTTP through the proxy
        Files.copy(python, agent, StandardCopyOption.REPLACE_EXISTING);
        Reply replaced = py(agent, "replaced.test");
        assertEquals(403, replaced.status(), replaced::toString);
        assertTrue(replaced.body().contains("binary integrity violation: " + agent + " changed since it was first"
                + " seen"), replaced.body());
        List<JsonObject> findings = supervisor.auditEvents().stream()
                .filter(e -> e.getInt("class_uid") == 2004
                        && e.getJsonObject("finding_info").getJsonArray("types").getString(0)
                                .equals("process.integrity_violation")).toList();
        assertEquals(1, findings.size(), "one High finding for the refused connection");
        assertEquals(4, findings.get(0).getInt("severity_id"));
        assertEquals(agent.toString(), AuditLog.openshell(findings.get(0)).getString("binary"));
    }
}
