package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code supervisor ca export} and {@code supervisor ca rotate}. */
class CaCommandTest {
    @TempDir
    Path dir;

    private Path state() {
        return dir.resolve("state");
    }

    private static X509Certificate parse(String pem) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }

    @Test
    void pemExportCreatesTheCaOnceAndPrintsTheSameCertificateAfterwards() throws Exception {
        Cli.Run first = Cli.run("ca", "export", "--state-dir", state().toString());
        assertEquals(0, first.exit(), first.toString());
        assertTrue(first.err().startsWith("created a new supervisor CA in " + state().resolve("ca")), first.err());
        X509Certificate ca = parse(first.out());
        assertTrue(ca.getBasicConstraints() >= 0, "a CA");
        assertTrue(ca.getSubjectX500Principal().getName().contains("OpenShell supervisor CA"));
        assertTrue(!first.out().contains("PRIVATE KEY"), "never the key");

        Cli.Run again = Cli.run("ca", "export", "--state-dir", state().toString(), "--format", "pem");
        assertEquals(0, again.exit());
        assertEquals("", again.err());
        assertEquals(first.out(), again.out());
        assertEquals(Files.readString(state().resolve("ca/supervisor-ca.pem")), again.out());
    }

    @Test
    void envExportPrintsTheVariablesOfCommonRuntimes() {
        Cli.Run r = Cli.run("ca", "export", "--state-dir", state().toString(), "--format", "env");
        assertEquals(0, r.exit(), r.toString());
        Map<String, String> vars = new TreeMap<>();
        for (String line : r.out().lines().toList()) {
            if (line.startsWith("#")) {
                continue;
            }
            assertTrue(line.startsWith("export "), line);
            int eq = line.indexOf('=');
            vars.put(line.substring(7, eq), line.substring(eq + 1));
        }
        String pem = state().resolve("ca/supervisor-ca.pem").toAbsolutePath().toString();
        assertEquals(pem, vars.get("SSL_CERT_FILE"));
        assertEquals(pem, vars.get("REQUESTS_CA_BUNDLE"));
        assertEquals(pem, vars.get("CURL_CA_BUNDLE"));
        assertEquals(pem, vars.get("NODE_EXTRA_CA_CERTS"));
        assertEquals("'-Djavax.net.ssl.trustStore=" + state().resolve("ca/supervisor-ca.p12").toAbsolutePath()
                + " -Djavax.net.ssl.trustStoreType=PKCS12 -Djavax.net.ssl.trustStorePassword=changeit'",
                vars.get("JAVA_TOOL_OPTIONS"));
        assertEquals(5, vars.size());
    }

    @Test
    void envExportUsesTheSandboxsPathsWhenGivenAndQuotesForTheShell() {
        Cli.Run r = Cli.run("ca", "export", "--state-dir", state().toString(), "--format", "env",
                "--ca-path", "/etc/openshell/ca.pem", "--bundle-path", "/etc/ssl/bundle with space.pem",
                "--truststore-path", "/etc/openshell/ca.p12", "--password", "it's");
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("export NODE_EXTRA_CA_CERTS=/etc/openshell/ca.pem\n"), r.out());
        assertTrue(r.out().contains("export SSL_CERT_FILE='/etc/ssl/bundle with space.pem'\n"), r.out());
        assertTrue(r.out().contains("-Djavax.net.ssl.trustStore=/etc/openshell/ca.p12 "), r.out());
        assertTrue(r.out().contains("trustStorePassword=it'\\''s'\n"), r.out());
    }

    @Test
    void pkcs12ExportWritesATruststoreJavaLoads() throws Exception {
        Path store = dir.resolve("trust.p12");
        Cli.Run r = Cli.run("ca", "export", "--state-dir", state().toString(), "--format", "pkcs12", "--out",
                store.toString());
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.err().contains("wrote pkcs12 to " + store), r.err());
        KeyStore ks = KeyStore.getInstance(store.toFile(), "changeit".toCharArray());
        assertEquals(List.of(CaCommand.ALIAS), Collections.list(ks.aliases()));
        assertTrue(ks.isCertificateEntry(CaCommand.ALIAS));
        assertEquals(parse(Files.readString(state().resolve("ca/supervisor-ca.pem"))),
                ks.getCertificate(CaCommand.ALIAS));

        Path withRoots = dir.resolve("roots.p12");
        assertEquals(0, Cli.run("ca", "export", "--state-dir", state().toString(), "--format", "pkcs12", "--out",
                withRoots.toString(), "--include-system-roots", "--password", "pw").exit());
        KeyStore all = KeyStore.getInstance(withRoots.toFile(), "pw".toCharArray());
        assertTrue(all.size() > 10, "the runtime's roots too: " + all.size());
        assertTrue(all.isCertificateEntry(CaCommand.ALIAS));
    }

    @Test
    void pemWithSystemRootsStartsWithTheCa() throws Exception {
        Path bundle = dir.resolve("bundle.pem");
        assertEquals(0, Cli.run("ca", "export", "--state-dir", state().toString(), "--include-system-roots",
                "--out", bundle.toString()).exit());
        String text = Files.readString(bundle);
        assertTrue(text.split("-----BEGIN CERTIFICATE-----").length > 10);
        assertEquals(parse(Files.readString(state().resolve("ca/supervisor-ca.pem"))), parse(text));
    }

    @Test
    void rotateReplacesTheCaAndExportFollows() throws Exception {
        X509Certificate before = parse(Cli.run("ca", "export", "--state-dir", state().toString()).out());
        Cli.Run r = Cli.run("ca", "rotate", "--state-dir", state().toString());
        assertEquals(0, r.exit(), r.toString());
        assertTrue(r.out().contains("previous CA copied to " + state().resolve("ca/previous")), r.out());
        X509Certificate after = parse(Cli.run("ca", "export", "--state-dir", state().toString()).out());
        assertNotEquals(before, after);
    }

    @Test
    void anOperatorCaIsExportedAndNotRotated() throws Exception {
        Path operator = dir.resolve("operator");
        assertEquals(0, Cli.run("ca", "export", "--state-dir", operator.toString()).exit());
        Path gateway = dir.resolve("gateway.toml");
        Files.writeString(gateway, """
                [openshell.supervisor.tls]
                ca_cert = "operator/ca/supervisor-ca.pem"
                ca_key = "operator/ca/supervisor-ca-key.pem"
                """);
        Cli.Run export = Cli.run("ca", "export", "--gateway-config", gateway.toString(), "--state-dir",
                state().toString());
        assertEquals(0, export.exit(), export.toString());
        assertEquals(Files.readString(operator.resolve("ca/supervisor-ca.pem")), export.out());
        assertTrue(!Files.exists(state().resolve("ca")), "no generated CA beside an operator CA");

        Cli.Run rotate = Cli.run("ca", "rotate", "--gateway-config", gateway.toString());
        assertEquals(1, rotate.exit());
        assertTrue(rotate.err().contains("supplies its own CA"), rotate.err());
    }

    @Test
    void errorsAndUsage() throws IOException {
        assertEquals(2, Cli.run("ca").exit(), "a subcommand is required");
        assertEquals(2, Cli.run("ca", "export", "--state-dir", state().toString(), "--format", "pkcs12").exit(),
                "pkcs12 needs --out");
        assertEquals(2, Cli.run("ca", "export", "--format", "der").exit());
        assertEquals(2, Cli.run("ca", "export", "--format", "env", "--include-system-roots").exit());
        Files.createDirectories(state().resolve("ca"));
        Files.writeString(state().resolve("ca/supervisor-ca.pem"), "not a certificate\n");
        Cli.Run broken = Cli.run("ca", "export", "--state-dir", state().toString());
        assertEquals(1, broken.exit());
        assertTrue(broken.err().startsWith("supervisor: cannot export the CA: CA state is incomplete"), broken.err());
        Path gateway = dir.resolve("bad.toml");
        Files.writeString(gateway, "[openshell.supervisor]\nstate = 1\n");
        Cli.Run bad = Cli.run("ca", "export", "--gateway-config", gateway.toString());
        assertEquals(1, bad.exit());
        assertTrue(bad.err().contains(gateway + ":2:1: error:"), bad.err());
    }
}
