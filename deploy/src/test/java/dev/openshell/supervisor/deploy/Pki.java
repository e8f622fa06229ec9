package dev.openshell.supervisor.deploy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Test certificates made with the {@code openssl} command, in the shapes cert-manager writes into a Secret:
 * {@code tls.crt}, {@code tls.key} (EC P-256, PKCS#8) and {@code ca.crt}.
 */
final class Pki {
    private Pki() {
    }

    /**
     * Makes a self-signed CA in {@code dir}: {@code tls.crt}, {@code tls.key}, and {@code ca.crt} (the same).
     *
     * @param dir the directory (created)
     * @param cn its common name
     * @throws IOException when openssl fails
     * @throws InterruptedException when interrupted
     */
    static void ca(Path dir, String cn) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "tls.key", "-out", "tls.crt", "-days", "2", "-subj", "/CN=" + cn,
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign");
        Files.copy(dir.resolve("tls.crt"), dir.resolve("ca.crt"));
    }

    /**
     * Makes a certificate signed by the CA in {@code caDir}: {@code tls.crt}, {@code tls.key}, {@code ca.crt}.
     *
     * @param dir the directory (created)
     * @param caDir a directory made by {@link #ca}
     * @param cn the common name
     * @param usage {@code serverAuth} or {@code clientAuth}
     * @param sans subject alternative names in openssl's form ({@code DNS:name}, {@code IP:127.0.0.1}), may be empty
     * @throws IOException when openssl fails
     * @throws InterruptedException when interrupted
     */
    static void leaf(Path dir, Path caDir, String cn, String usage, List<String> sans)
            throws IOException, InterruptedException {
        Files.createDirectories(dir);
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=" + cn);
        StringBuilder ext = new StringBuilder("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n")
                .append("extendedKeyUsage=").append(usage).append('\n');
        if (!sans.isEmpty()) {
            ext.append("subjectAltName=").append(String.join(",", sans)).append('\n');
        }
        Files.writeString(dir.resolve("ext.cnf"), ext);
        openssl(dir, "x509", "-req", "-in", "tls.csr", "-CA", caDir.resolve("tls.crt").toString(),
                "-CAkey", caDir.resolve("tls.key").toString(), "-set_serial", String.valueOf(System.nanoTime()),
                "-days", "2", "-extfile", "ext.cnf", "-out", "tls.crt");
        Files.copy(caDir.resolve("tls.crt"), dir.resolve("ca.crt"));
        Files.delete(dir.resolve("tls.csr"));
        Files.delete(dir.resolve("ext.cnf"));
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Path log = Files.createTempFile("openssl", ".log");
        try {
            Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + " failed: " + Files.readString(log));
            }
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
