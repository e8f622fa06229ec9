package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code validate}, {@code explain} and {@code ca} run from the image, with the built-ins it ships. */
class OperatorCommandsIT {
    @TempDir
    Path tmp;

    private static final String POLICY = """
            version: 1
            network_policies:
              models:
                name: model APIs
                endpoints:
                  - host: "*.model.example"
                    port: 443
            network_middlewares:
              secrets:
                middleware: openshell/regex
                order: 10
                config: { mode: redact }
                endpoints:
                  include: ["**"]
                  exclude: ["internal.model.example"]
            """;

    private static JsonObject json(Image.Run r) {
        return Json.createReader(new StringReader(r.out())).readObject();
    }

    private Path write(String name, String text) throws Exception {
        Path p = tmp.resolve(name);
        Files.writeString(p, text);
        return p;
    }

    @Test
    void validateExitsZeroOrOneAndReportsEveryProblemWithItsPosition() throws Exception {
        Path good = write("good.yaml", POLICY);
        Image.Run ok = Image.run(Image.HOME, "validate", "--policy", good.toString());
        assertEquals(0, ok.exit(), ok.err());
        assertTrue(ok.out().contains("valid (0 error(s)"), ok.out());

        Path bad = write("bad.yaml", POLICY.replace("mode: redact", "mode: shout")
                .replace("openshell/regex", "openshell/regexp"));
        Image.Run r = Image.run(Image.HOME, "validate", "--policy", bad.toString(), "--format", "json");
        assertEquals(1, r.exit(), r.out() + r.err());
        JsonObject o = json(r);
        assertFalse(o.getBoolean("valid"));
        JsonObject p = o.getJsonArray("problems").getJsonObject(0);
        assertEquals(bad.toString(), p.getString("file"));
        assertEquals(10, p.getInt("line"));
        assertEquals("network_middlewares.secrets.middleware", p.getString("key"));
        assertEquals("", r.err(), "nothing on stderr but what the report holds");
    }

    @Test
    void explainPrintsTheDocumentedJson() throws Exception {
        Path policy = write("policy.yaml", POLICY);
        Image.Run r = Image.run(Image.HOME, "explain", "--policy", policy.toString(), "api.model.example",
                "--format", "json");
        assertEquals(0, r.exit(), r.err());
        JsonObject o = json(r);
        assertEquals(Set.of("admitted", "binary", "network_policy", "ssrf", "refusal", "policies", "l7", "chain",
                "response_stages", "not_selected"), o.keySet());
        assertEquals("models", o.getString("network_policy"));
        JsonObject stage = o.getJsonArray("chain").getJsonObject(0);
        assertEquals("built-in dev.openshell.builtin.regex", stage.getString("owner"));
        assertEquals(4194304, stage.getJsonNumber("max_body_bytes").longValue());

        JsonObject excluded = json(Image.run(Image.HOME, "explain", "--policy", policy.toString(),
                "internal.model.example", "--format", "json"));
        assertEquals(0, excluded.getJsonArray("chain").size());
        assertTrue(excluded.getJsonArray("not_selected").getJsonObject(0).getString("reason")
                .contains("endpoints.exclude pattern 'internal.model.example'"), excluded.toString());

        assertEquals(2, Image.run(Image.HOME, "explain", "--policy", policy.toString(), "host:99999").exit());
    }

    @Test
    void caExportAndRotateFromTheImage() throws Exception {
        Path state = tmp.resolve("state");
        Image.Run pem = Image.run(Image.HOME, "ca", "export", "--state-dir", state.toString());
        assertEquals(0, pem.exit(), pem.err());
        X509Certificate ca = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(
                new ByteArrayInputStream(pem.out().getBytes(StandardCharsets.US_ASCII)));

        Path store = tmp.resolve("truststore.p12");
        Image.Run p12 = Image.run(Image.HOME, "ca", "export", "--state-dir", state.toString(), "--format", "pkcs12",
                "--include-system-roots", "--out", store.toString());
        assertEquals(0, p12.exit(), p12.err());
        KeyStore ks = KeyStore.getInstance(store.toFile(), "changeit".toCharArray());
        assertEquals(ca, ks.getCertificate("openshell-supervisor-ca"));
        assertTrue(ks.size() > 10, "the image's own roots are included: " + ks.size());

        Image.Run env = Image.run(Image.HOME, "ca", "export", "--state-dir", state.toString(), "--format", "env");
        assertEquals(0, env.exit());
        for (String v : new String[] {"SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
                "JAVA_TOOL_OPTIONS"}) {
            assertTrue(env.out().contains("export " + v + "="), v + " in\n" + env.out());
        }

        Image.Run rotate = Image.run(Image.HOME, "ca", "rotate", "--state-dir", state.toString());
        assertEquals(0, rotate.exit(), rotate.err());
        Image.Run after = Image.run(Image.HOME, "ca", "export", "--state-dir", state.toString());
        assertNotEquals(pem.out(), after.out());
        assertEquals(2, Image.run(Image.HOME, "ca", "export", "--format", "pkcs12").exit(), "pkcs12 needs --out");
    }

    /**
     * The README's first command ({@code ./dev.sh demo} runs this): every step of the tour behaves as expected, and
     * the tour leaves nothing in the temporary directory (its work directory was left in /tmp by every run).
     */
    @Test
    void theDemoPassesEveryStepAndLeavesNothingBehind(@TempDir Path tmp) throws Exception {
        Image.Run r = Image.run(Image.HOME, Map.of("SUPERVISOR_JAVA_OPTS", "-Djava.io.tmpdir=" + tmp), "demo");
        assertEquals(0, r.exit(), r.out() + r.err());
        assertTrue(r.out().contains("demo passed: every step behaved as expected"), r.out());
        try (Stream<Path> left = Files.list(tmp)) {
            assertEquals(List.of(), left.map(p -> p.getFileName().toString()).toList());
        }
    }

    @Test
    void helpOnEveryCommandExitsZeroAndFollowsTheWords() throws Exception {
        for (String[] args : new String[][] {{"--help"}, {"run", "--help"}, {"run", "-h"}, {"validate", "--help"},
                {"explain", "-h"}, {"ca", "export", "--help"}, {"policy", "print-default", "-h"}, {"plugins", "-h"},
                {"privacy-guard", "--help"}, {"demo", "--help"}}) {
            Image.Run r = Image.run(Image.HOME, args);
            assertEquals(0, r.exit(), String.join(" ", args) + "\n" + r.err());
            assertTrue(r.out().startsWith("Usage: supervisor"), r.out());
            assertEquals("", r.err(), String.join(" ", args) + ": nothing is missing when help is asked for");
        }
        Image.Run help = Image.run(Image.HOME, "help", "ca", "export");
        assertEquals(0, help.exit());
        assertTrue(help.out().startsWith("Usage: supervisor ca export"), help.out());

        Image.Run bogus = Image.run(Image.HOME, "bogus");
        assertEquals(2, bogus.exit());
        assertFalse(bogus.err().contains("privacy-guard?"), bogus.err());
        assertTrue(bogus.err().startsWith("supervisor: unknown command 'bogus'"), bogus.err());
    }

    @Test
    void aPortInUseIsOneLineWithTheAddressAndTheCauseAndExitOne() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            String address = "127.0.0.1:" + taken.getLocalPort();
            Image.Run r = Image.run(Image.HOME, "run", "--listen", address, "--admin-listen", "off", "--state-dir",
                    tmp.resolve("state").toString(), "--audit-log", "off");
            assertEquals(1, r.exit(), r.err());
            assertEquals("", r.out());
            assertEquals(java.util.List.of("supervisor: cannot start: the proxy cannot listen on " + address
                    + ": address already in use"), r.err().lines().filter(l -> l.contains("listen")).toList(),
                    r.err());
            assertFalse(r.err().contains("\tat "), "no stack trace without --debug:\n" + r.err());
            assertFalse(r.err().contains("preview"), "no Helidon preview-feature lines:\n" + r.err());
            assertFalse(r.err().contains("Exception"), r.err());

            Image.Run debug = Image.run(Image.HOME, "run", "--debug", "--listen", address, "--admin-listen", "off",
                    "--state-dir", tmp.resolve("state").toString(), "--audit-log", "off");
            assertEquals(1, debug.exit());
            assertTrue(debug.err().contains("\tat ") && debug.err().contains("BindException"),
                    "--debug shows the stack trace:\n" + debug.err());
        }
    }

    @Test
    void aMissingPluginsDirectoryStopsRunAndFailsPlugins() throws Exception {
        Path missing = tmp.resolve("no-such-plugins");
        Image.Run run = Image.run(Image.HOME, "run", "--plugins", missing.toString(), "--listen", "127.0.0.1:0",
                "--admin-listen", "off", "--state-dir", tmp.resolve("state").toString(), "--audit-log", "off");
        assertEquals(1, run.exit(), run.err());
        assertTrue(run.err().contains("supervisor: cannot start: the plugins directory " + missing
                + " does not exist (--plugins)"), run.err());
        Image.Run plugins = Image.run(Image.HOME, "plugins", "--plugins", missing.toString());
        assertEquals(1, plugins.exit(), plugins.err());
        assertTrue(plugins.err().contains("does not exist"), plugins.err());
        Image.Run validate = Image.run(Image.HOME, "validate", "--policy", write("p.yaml", POLICY).toString(),
                "--plugins", missing.toString());
        assertEquals(1, validate.exit(), validate.out());
        assertTrue(validate.out().contains("does not exist"), validate.out());
    }

    @Test
    void validateReportsStructuralAndBindingErrorsTogether() throws Exception {
        Path bad = write("bad.yaml", POLICY.replace("mode: redact", "mode: shout").replace("order: 10",
                "order: ten").replace("port: 443", "port: 99999"));
        Image.Run r = Image.run(Image.HOME, "validate", "--policy", bad.toString());
        assertEquals(1, r.exit(), r.out());
        assertTrue(r.out().contains("network_middlewares.secrets.order"), r.out());
        assertTrue(r.out().contains("network_policies.models"), r.out());
        assertTrue(r.out().contains("'mode' must be \"redact\" or \"deny\""), "the binding's own validation "
                + "runs with the structural errors:\n" + r.out());
    }

    @Test
    void explainAppliesSsrfAndExplainsTheDefaultPolicy() throws Exception {
        Image.Run dflt = Image.run(Image.HOME, "explain", "api.openai.com");
        assertEquals(0, dflt.exit(), dflt.err());
        assertTrue(dflt.out().startsWith("policy:    (embedded default policy)"), dflt.out());
        assertTrue(dflt.out().contains("1. secrets  order 10  binding openshell/regex"), dflt.out());

        Image.Run loopback = Image.run(Image.HOME, "explain", "127.0.0.1:443");
        assertEquals(0, loopback.exit(), loopback.err());
        assertTrue(loopback.out().contains("ssrf:      BLOCKED (403 ssrf_blocked): the destination resolves to a "
                + "loopback address; a local upstream needs allow_loopback_upstreams"), loopback.out());

        Image.Run printed = Image.run(Image.HOME, "policy", "print-default");
        assertEquals(0, printed.exit());
        Path copy = write("default.yaml", printed.out());
        assertEquals(0, Image.run(Image.HOME, "validate", "--policy", copy.toString()).exit(),
                "the printed default is a valid policy to start from");
    }
}
