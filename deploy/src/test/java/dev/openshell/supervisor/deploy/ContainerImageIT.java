package dev.openshell.supervisor.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The OCI archive {@code ./dev.sh container} writes (jlink/target/oci/supervisor.tar), checked without a container
 * engine: skopeo reads it and its image configuration (non-root user, entrypoint, volumes, labels), umoci unpacks
 * it, and the unpacked root filesystem's {@code bin/supervisor} runs as the image's user in a chroot with no network
 * (unshare). Under -Pcontainer (CI) the archive must exist; otherwise the test is skipped when it is absent.
 */
class ContainerImageIT {
    static final Path ARCHIVE = Path.of(System.getProperty("deploy.oci.archive", "../jlink/target/oci/supervisor.tar"));
    static final String VERSION = System.getProperty("deploy.version", "0.1.0-SNAPSHOT");
    static final String REF = "oci-archive:" + ARCHIVE + ":" + VERSION;
    static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void archiveExists() {
        boolean required = Boolean.getBoolean("deploy.oci.required");
        if (!Files.isRegularFile(ARCHIVE)) {
            if (required) {
                throw new AssertionError("no OCI archive at " + ARCHIVE + " (-Pcontainer builds it)");
            }
            Assumptions.abort("no OCI archive at " + ARCHIVE + ": ./dev.sh container builds it");
        }
    }

    @Test
    void skopeoReadsTheArchiveAndItsConfiguration() throws Exception {
        JsonNode manifest = JSON.readTree(run(List.of("skopeo", "inspect", REF)));
        assertEquals("linux", manifest.get("Os").asText());
        assertTrue(manifest.get("Layers").size() >= 2, "a base layer and the runtime's");

        JsonNode config = JSON.readTree(run(List.of("skopeo", "inspect", "--config", REF))).get("config");
        assertEquals("65532:65532", config.get("User").asText(), "not root");
        assertEquals(List.of("/opt/supervisor/bin/supervisor", "run", "--state-dir", "/var/lib/supervisor"),
                strings(config.get("Entrypoint")));
        List<String> volumes = new ArrayList<>();
        config.get("Volumes").fieldNames().forEachRemaining(volumes::add);
        assertEquals(List.of("/opt/supervisor/plugins", "/var/lib/supervisor"), volumes.stream().sorted().toList());
        JsonNode labels = config.get("Labels");
        assertEquals(VERSION, labels.get("org.opencontainers.image.version").asText());
        assertFalse(labels.get("org.opencontainers.image.source").asText().isBlank());
        assertFalse(labels.get("org.opencontainers.image.licenses").asText().isBlank());
        assertFalse(labels.get("org.opencontainers.image.revision").asText().isBlank());
    }

    @Test
    void theUnpackedRootFilesystemRunsAsTheImagesUser(@TempDir Path tmp) throws Exception {
        Path layout = Files.createDirectories(tmp.resolve("layout"));
        run(List.of("tar", "-C", layout.toString(), "-xf", ARCHIVE.toString()));
        boolean root = "0".equals(run(List.of("id", "-u")).strip());
        List<String> unpack = new ArrayList<>(List.of("umoci", "unpack"));
        if (!root) {
            unpack.add("--rootless");
        }
        unpack.addAll(List.of("--image", layout + ":" + VERSION, tmp.resolve("bundle").toString()));
        run(unpack);
        Path rootfs = tmp.resolve("bundle/rootfs");
        assertTrue(Files.isExecutable(rootfs.resolve("opt/supervisor/bin/supervisor")));
        assertTrue(Files.isDirectory(rootfs.resolve("opt/supervisor/plugins")));
        Assumptions.assumeTrue(root, "chroot and unshare need root");
        assertEquals(0, Files.getAttribute(rootfs.resolve("opt/supervisor/bin/supervisor"), "unix:uid"),
                "the runtime belongs to root, not to the user that runs it");
        assertEquals(65532, Files.getAttribute(rootfs.resolve("var/lib/supervisor"), "unix:uid"));

        // no network namespace of the host's, its own /proc; the image's user, as its configuration says
        // a container runtime provides /dev; here the host's /dev/null is bind-mounted inside the new mount
        // namespace (the launcher redirects to it)
        Files.createFile(rootfs.resolve("dev/null"));
        List<String> jail = List.of("unshare", "--net", "--mount", "--pid", "--fork",
                "--mount-proc=" + rootfs.resolve("proc"), "sh", "-ec",
                "mount --bind /dev/null \"$0/dev/null\"; exec chroot --userspec=65532:65532 \"$0\" \"$@\"",
                rootfs.toString());
        List<String> version = new ArrayList<>(jail);
        version.addAll(List.of("/opt/supervisor/bin/supervisor", "--version"));
        assertTrue(run(version).startsWith("supervisor " + VERSION + " "), "bin/supervisor --version");

        // the state volume is the user's: the generated CA is written there
        List<String> ca = new ArrayList<>(jail);
        ca.addAll(List.of("/opt/supervisor/bin/supervisor", "ca", "export", "--state-dir", "/var/lib/supervisor"));
        assertTrue(run(ca).startsWith("-----BEGIN CERTIFICATE-----"));
        assertEquals(65532, Files.getAttribute(rootfs.resolve("var/lib/supervisor/ca"), "unix:uid"));
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /** Runs a command (bounded: 120 s), returns its standard output; fails with its error output. */
    private static String run(List<String> command) throws IOException, InterruptedException {
        Path err = Files.createTempFile("cmd", ".err");
        Path out = Files.createTempFile("cmd", ".out");
        try {
            Process p = new ProcessBuilder(command).redirectError(err.toFile()).redirectOutput(out.toFile()).start();
            p.getOutputStream().close();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError(String.join(" ", command) + ": took more than 120 s");
            }
            assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + Files.readString(err));
            return Files.readString(out);
        } finally {
            Files.deleteIfExists(err);
            Files.deleteIfExists(out);
        }
    }
}
