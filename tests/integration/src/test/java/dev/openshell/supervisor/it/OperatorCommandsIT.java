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
import java.util.Set;
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
        assertEquals(Set.of("admitted", "binary", "network_policy", "policies", "l7", "chain", "not_selected"),
                o.keySet());
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
}
