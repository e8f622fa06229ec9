package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.examples.privacyguard.PrivacyGuardServer;
import jakarta.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code supervisor tck} in-process against Privacy Guard on 127.0.0.1, and its usage errors. */
class TckCommandTest {
    @TempDir
    Path tmp;

    @Test
    void privacyGuardPassesOverPlaintextAndTheExitCodeFollowsTheReport() throws Exception {
        try (PrivacyGuardServer pg = PrivacyGuardServer.start(PrivacyGuardServer.Options.plaintext("127.0.0.1", 0))) {
            Path config = Files.writeString(tmp.resolve("config.json"), "{\"images\":\"redact\",\"pii\":\"redact\"}");
            Cli.Run run = Cli.run("tck", "--endpoint", "127.0.0.1:" + pg.port(), "--plaintext", "--config",
                    config.toString(), "--timeout", "5s", "--samples", "2", "--format", "json");
            JsonObject report = run.json();
            assertEquals(report.getBoolean("passed") ? 0 : 1, run.exit(), run.toString());
            // the one check Privacy Guard may fail is its server's connection reset after a cancelled call (TckIT)
            List<String> failed = report.getJsonArray("checks").getValuesAs(JsonObject.class).stream()
                    .filter(c -> c.getString("status").equals("FAIL")).map(c -> c.getString("name")).toList();
            assertTrue(failed.isEmpty() || failed.equals(List.of("deadline.recovers")), run.out());
            assertEquals("plaintext", report.getString("transport"));
            // 24 request checks, 3 probes and 6 WebSocket message checks (preflight, messages, after_end per phase)
            assertEquals(28 - 1 + 6, report.getJsonArray("checks").size(), "every check but load ran: " + run.out());
            // Privacy Guard redacts the probes' e-mail addresses and secrets: the transform passes validation
            for (String probe : List.of("evaluate.probe_email", "evaluate.probe_secret", "evaluate.probe_image")) {
                assertTrue(report.getJsonArray("checks").getValuesAs(JsonObject.class).stream().anyMatch(
                        c -> c.getString("name").equals(probe) && c.getString("status").equals("PASS")), run.out());
            }
        }
    }

    @Test
    void privacyGuardsResponseModePassesTheResponseChecks() throws Exception {
        try (PrivacyGuardServer pg = PrivacyGuardServer.start(PrivacyGuardServer.Options.plaintext("127.0.0.1", 0))) {
            Path config = Files.writeString(tmp.resolve("config.json"), "{\"images\":\"redact\",\"pii\":\"redact\"}");
            Cli.Run run = Cli.run("tck", "--endpoint", "127.0.0.1:" + pg.port(), "--plaintext", "--config",
                    config.toString(), "--timeout", "5s", "--binding", "examples/privacy-guard-response",
                    "--format", "json");
            JsonObject report = run.json();
            assertEquals(0, run.exit(), run.toString());
            List<String> passed = report.getJsonArray("checks").getValuesAs(JsonObject.class).stream()
                    .filter(c -> c.getString("status").equals("PASS")).map(c -> c.getString("name")).toList();
            assertTrue(passed.containsAll(List.of("response.preflight_modes", "response.body_units")), run.out());
        }
    }

    @Test
    void usageErrorsExitTwoAndNameTheProblem() throws Exception {
        Path bad = Files.writeString(tmp.resolve("bad.json"), "{\n  \"images\": redact\n}");
        Path array = Files.writeString(tmp.resolve("array.json"), "[1]");
        for (var c : List.of(
                List.of("--endpoint", "127.0.0.1:1", "--plaintext", "--tls-ca", "ca.pem"),
                List.of("--endpoint", "127.0.0.1:1", "--tls-cert", "c.pem"),
                List.of("--endpoint", "http://127.0.0.1:1", "--plaintext"),
                List.of("--endpoint", "127.0.0.1:1", "--plaintext", "--timeout", "5m"),
                List.of("--endpoint", "127.0.0.1:1", "--plaintext", "--samples", "0"),
                List.of("--endpoint", "127.0.0.1:1", "--plaintext", "--config", array.toString()),
                List.of("--endpoint", "127.0.0.1:1", "--plaintext", "--config", bad.toString()),
                List.of("--endpoint", "127.0.0.1:1", "--plaintext", "--body", tmp.resolve("absent.txt").toString()))) {
            List<String> args = new java.util.ArrayList<>(List.of("tck"));
            args.addAll(c);
            Cli.Run run = Cli.run(args.toArray(String[]::new));
            assertEquals(2, run.exit(), c + ": " + run);
        }
        Cli.Run run = Cli.run("tck", "--endpoint", "127.0.0.1:1", "--plaintext", "--config", bad.toString());
        assertTrue(run.err().contains(bad + ":2:"), run.err());
    }

    @Test
    void anUnreachableServiceExitsOne() {
        Cli.Run run = Cli.run("tck", "--endpoint", "127.0.0.1:1", "--plaintext", "--timeout", "100ms");
        assertEquals(1, run.exit(), run.toString());
        assertTrue(run.out().contains("FAIL  describe.answer"), run.out());
        assertTrue(run.out().contains("FAILED"), run.out());
    }
}
