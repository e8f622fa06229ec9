package dev.openshell.supervisor.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.examples.privacyguard.PrivacyGuardServer;
import jakarta.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code supervisor tck} in-process against Privacy Guard on 127.0.0.1, and its usage errors. */
class TckCommandTest {
    @TempDir
    Path tmp;

    @Test
    void privacyGuardPassesEveryCheckOverPlaintext() throws Exception {
        try (PrivacyGuardServer pg = PrivacyGuardServer.start(PrivacyGuardServer.Options.plaintext("127.0.0.1", 0))) {
            Path config = Files.writeString(tmp.resolve("config.json"), "{\"images\":\"redact\",\"pii\":\"redact\"}");
            Cli.Run run = Cli.run("tck", "--endpoint", "127.0.0.1:" + pg.port(), "--plaintext", "--config",
                    config.toString(), "--timeout", "5s", "--samples", "3", "--load", "4", "--load-seconds", "1",
                    "--format", "json");
            JsonObject report = run.json();
            assertEquals(0, run.exit(), run.toString());
            assertTrue(report.getBoolean("passed"), run.out());
        }
    }
}
