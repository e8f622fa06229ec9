package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The per-runtime routing and trust guide of {@code docs/operators.md} ("Route the sandbox through the proxy"), run:
 * each script of {@code tests/integration/runtimes/} reaches an HTTPS upstream through the supervisor, configured only
 * as the guide says, and the upstream sees the request (so it went through the proxy, which intercepted it with its
 * CA). A runtime that is not installed is skipped with a message; {@code .ci/run} installs them.
 */
class RuntimeRoutingIT extends RunningWorld {
    static final Path SCRIPTS = Paths.get(System.getProperty("it.runtimes", "runtimes"));

    static Path truststore;

    @BeforeAll
    static void exportCa() throws Exception {
        truststore = tmp.resolve("supervisor-ca.p12");
        Image.Run r = Image.run(Image.HOME, "ca", "export", "--state-dir", world.stateDir.toString(), "--format",
                "pkcs12", "--out", truststore.toString());
        assertEquals(0, r.exit(), r.err());
    }

    private static boolean installed(String... probe) {
        try {
            Process p = new ProcessBuilder(probe).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** Runs a client with a clean environment plus {@code env}; asserts it got the upstream's answer through us. */
    private static void through(String runtime, List<String> command, Map<String, String> env, int seconds)
            throws Exception {
        String path = "/routing/" + runtime;
        List<String> cmd = new ArrayList<>(command);
        cmd.add("https://" + ProxyWorld.PLAIN + ":" + world.tls.port() + path);
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.toLowerCase(java.util.Locale.ROOT).endsWith("_proxy")
                || k.startsWith("SSL_CERT") || k.startsWith("REQUESTS_CA") || k.startsWith("CURL_CA")
                || k.startsWith("NODE_") || k.equals("JAVA_TOOL_OPTIONS"));
        pb.environment().putAll(env);
        Path out = tmp.resolve(runtime + ".out");
        Path err = tmp.resolve(runtime + ".err");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        int before = world.tls.count();
        Process p = pb.start();
        if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(runtime + " did not finish within " + seconds + " s");
        }
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), runtime + ": " + stderr);
        assertEquals("ok", Files.readString(out, StandardCharsets.UTF_8), runtime + ": " + stderr);
        assertTrue(world.tls.count() > before, runtime + ": the upstream saw no request");
        List<RawUpstream.Received> got = world.tls.drain();
        assertTrue(got.stream().anyMatch(g -> g.rawText().startsWith("GET " + path + " ")), runtime + ": " + got);
    }

    private static Map<String, String> proxyEnv(String caVariable) {
        return Map.of("HTTPS_PROXY", supervisor.proxyUrl(), caVariable, world.supervisorCa().toString());
    }

    private static String script(String name) {
        return SCRIPTS.resolve(name).toAbsolutePath().toString();
    }

    @Test
    void curl() throws Exception {
        assumeTrue(installed("curl", "--version"), "curl is not installed (apt-get install curl)");
        through("curl", List.of("sh", script("curl.sh")), proxyEnv("CURL_CA_BUNDLE"), 60);
    }

    @Test
    void pythonUrllib() throws Exception {
        assumeTrue(installed("python3", "--version"), "python3 is not installed (apt-get install python3)");
        through("python-urllib", List.of("python3", script("python_urllib.py")), proxyEnv("SSL_CERT_FILE"), 60);
    }

    @Test
    void pythonRequests() throws Exception {
        assumeTrue(installed("python3", "-c", "import requests"),
                "Python requests is not installed (apt-get install python3-requests)");
        through("python-requests", List.of("python3", script("python_requests.py")),
                proxyEnv("REQUESTS_CA_BUNDLE"), 60);
    }

    @Test
    void nodeWithUndici() throws Exception {
        Map<String, String> env = new java.util.HashMap<>(proxyEnv("NODE_EXTRA_CA_CERTS"));
        // .ci/run installs undici 6 here (npm); Debian's node-undici is 5.x, whose ProxyAgent sends the proxy's own
        // address as Host on CONNECT, which the supervisor refuses (400 host_mismatch, RFC 9112 section 3.2)
        env.put("NODE_PATH", SCRIPTS.resolve("node_modules").toAbsolutePath() + ":/usr/share/nodejs");
        assumeTrue(installed("node", "--version"), "Node.js is not installed (apt-get install nodejs)");
        assumeTrue(installed("env", "NODE_PATH=" + env.get("NODE_PATH"), "node", "-e",
                        "if (!require('undici').EnvHttpProxyAgent) process.exit(1)"),
                "undici 6.10 or later is not installed (npm install --prefix tests/integration/runtimes undici@6; "
                        + ".ci/run does it)");
        through("node", List.of("node", script("node_undici.js")), env, 60);
    }

    @Test
    void javaHttpClientWithSystemProperties() throws Exception {
        Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
        through("java", List.of(java.toString(), "-Dhttps.proxyHost=" + supervisor.host(),
                "-Dhttps.proxyPort=" + supervisor.port(), "-Djavax.net.ssl.trustStore=" + truststore,
                "-Djavax.net.ssl.trustStoreType=PKCS12", "-Djavax.net.ssl.trustStorePassword=changeit",
                script("Routing.java")), Map.of(), 120);
    }

    @Test
    void go() throws Exception {
        assumeTrue(installed("go", "version"), "Go is not installed (apt-get install golang-go)");
        Map<String, String> env = new java.util.HashMap<>(proxyEnv("SSL_CERT_FILE"));
        // the build cache outlives the run, so only the first run on a machine compiles net/http
        env.put("GOCACHE", Paths.get(System.getProperty("user.home"), ".cache", "go-build").toString());
        env.put("GO111MODULE", "off");
        through("go", List.of("go", "run", script("go_client.go")), env, 300);
    }
}
