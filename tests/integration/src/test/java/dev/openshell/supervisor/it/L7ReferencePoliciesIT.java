package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * The two OpenShell example policies of {@code tests/data/reference/openshell-policies} enforce what they say,
 * through {@code supervisor run} and the system's {@code curl} (which both examples name in {@code binaries}, so
 * binary scoping admits it), over intercepted HTTPS: the quickstart's {@code api.github.com} {@code access:
 * read-only} admits a GET and denies a POST and a DELETE; the content-guard example's {@code httpbingo.org} rule
 * admits {@code POST /anything} and denies a GET. The files are used as they are, except that {@code port: 443}
 * becomes the port of the loopback HTTPS upstream (the host names point at 127.0.0.1 through {@code static_hosts}),
 * and the content guard's binding is served by a recording external service. Neither loads with an L7 warning.
 */
@EnabledOnOs(OS.LINUX)
class L7ReferencePoliciesIT {
    static final List<String> HOSTS = List.of("api.github.com", "httpbin.org", "httpbingo.org");

    @TempDir
    static Path work;
    static RawUpstream tls;
    static MiddlewareDouble guard;
    static StackProcess quickstart;
    static StackProcess contentGuard;

    @BeforeAll
    static void start() throws Exception {
        L7EnforcementIT.LoopbackTls loopback = L7EnforcementIT.LoopbackTls.create(work, HOSTS);
        tls = loopback.tls();
        guard = MiddlewareDouble.start("content-guard-example");
        Path gateway = Files.writeString(work.resolve("gateway.toml"), loopback.gateway() + """

                [[openshell.supervisor.middleware]]
                name = "content-guard-example"
                grpc_endpoint = "http://127.0.0.1:%d"
                max_body_bytes = 1048576
                timeout = "5s"
                allow_insecure = true
                """.formatted(guard.port()));
        quickstart = StackProcess.start(work.resolve("quickstart"), example("policy_example_quickstart.yaml"),
                gateway, Map.of());
        contentGuard = StackProcess.start(work.resolve("content-guard"), example("policy_example_content_guard.yaml"),
                gateway, Map.of());
    }

    /** {@return a copy of an example whose port 443 is the loopback upstream's} */
    static Path example(String name) throws Exception {
        Path source = Path.of(System.getProperty("supervisor.testdata", "../../tests/data"), "reference",
                "openshell-policies", name);
        String text = Files.readString(source);
        assertTrue(text.contains("port: 443"), name);
        return Files.writeString(work.resolve(name), text.replace("port: 443", "port: " + tls.port()));
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {quickstart, contentGuard, guard, tls}) {
            if (c != null) {
                c.close();
            }
        }
    }

    static Curl.Result curl(StackProcess supervisor, String dir, String method, String url) throws Exception {
        Path ca = work.resolve(dir).resolve("state").resolve("ca").resolve("supervisor-ca.pem");
        return Curl.run(Map.of("HTTPS_PROXY", "http://127.0.0.1:" + supervisor.port()), "-X", method,
                "--cacert", ca.toString(), url);
    }

    static JsonObject json(String body) {
        return Json.createReader(new StringReader(body)).readObject();
    }

    @Test
    void theQuickstartsReadOnlyGithubPolicyAdmitsGetAndDeniesWrites() throws Exception {
        String url = "https://api.github.com:" + tls.port() + "/repos/octo/hello/issues";
        tls.drain();
        Curl.Result get = curl(quickstart, "quickstart", "GET", url);
        assertEquals(200, get.status(), get.toString());
        assertTrue(tls.take().requestLine().startsWith("GET /repos/octo/hello/issues "));
        for (String method : List.of("POST", "DELETE")) {
            int before = tls.count();
            Curl.Result r = curl(quickstart, "quickstart", method, url);
            assertEquals(403, r.status(), method + ": " + r);
            JsonObject o = json(r.body());
            assertEquals("l7", o.getString("layer"));
            assertEquals("github_api", o.getString("policy"));
            assertEquals(before, tls.count(), method + " never reached the upstream");
        }
        assertFalse(quickstart.stderr().contains("not yet enforced"), quickstart.stderr());
    }

    @Test
    void theContentGuardExamplesRulesAdmitPostAnythingAndDenyTheRest() throws Exception {
        String url = "https://httpbingo.org:" + tls.port() + "/anything";
        tls.drain();
        Curl.Result post = Curl.run(Map.of("HTTPS_PROXY", "http://127.0.0.1:" + contentGuard.port()),
                "--cacert", work.resolve("content-guard").resolve("state").resolve("ca").resolve("supervisor-ca.pem")
                        .toString(), "--data-binary", "hello", url);
        assertEquals(200, post.status(), post.toString());
        assertTrue(tls.take().requestLine().startsWith("POST /anything "));
        int before = tls.count();
        Curl.Result get = curl(contentGuard, "content-guard", "GET", url);
        assertEquals(403, get.status(), get.toString());
        assertEquals("httpbingo", json(get.body()).getString("policy"));
        Curl.Result elsewhere = curl(contentGuard, "content-guard", "GET", "https://httpbin.org:" + tls.port()
                + "/get");
        assertEquals(403, elsewhere.status(), elsewhere.toString());
        assertEquals(before, tls.count(), "the denied requests never reached the upstream");
        assertFalse(contentGuard.stderr().contains("not yet enforced"), contentGuard.stderr());
    }
}
