package dev.openshell.supervisor.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/systemd/openshell-supervisor.service: {@code systemd-analyze verify} accepts it (with ExecStart pointing at
 * the built image, since verify checks that the program exists), and it keeps its hardening. Skipped where
 * systemd-analyze is not installed.
 */
class SystemdUnitIT {
    static final Path UNIT = Path.of(System.getProperty("supervisor.root", ".."))
            .resolve("deploy/systemd/openshell-supervisor.service");

    @Test
    void systemdAcceptsTheUnitAndItKeepsItsHardening(@TempDir Path tmp) throws Exception {
        String unit = Files.readString(UNIT);
        for (String line : List.of("DynamicUser=yes", "NoNewPrivileges=yes", "CapabilityBoundingSet=\n",
                "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "PrivateDevices=yes",
                "RestrictNamespaces=yes", "SystemCallFilter=@system-service", "ExecReload=/bin/kill -HUP $MAINPID",
                "MemoryMax=1G")) {
            assertTrue(unit.contains(line), "the unit lost " + line.strip());
        }
        Path analyze = Path.of("/usr/bin/systemd-analyze");
        Assumptions.assumeTrue(Files.isExecutable(analyze), "systemd-analyze is not installed");
        Path copy = tmp.resolve("openshell-supervisor.service");
        Files.writeString(copy, unit.replace("/opt/openshell-supervisor/bin/supervisor",
                Path.of(KubernetesManifestsIT.IMAGE).toAbsolutePath() + "/bin/supervisor"));
        Path out = tmp.resolve("verify.txt");
        Process p = new ProcessBuilder(analyze.toString(), "verify", copy.toString())
                .redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "systemd-analyze verify timed out");
        assertEquals(0, p.exitValue(), Files.readString(out));
        assertEquals("", Files.readString(out).strip(), "warnings");
    }
}
