package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The text a scan reads joins every reading of a body, so it passes 16 MiB (2^24 bytes) for a 4 MiB body read a few
 * ways: a match there keeps its position (attacker pass 19, P25-4: positions packed in 24 bits wrapped, and the scan
 * of a 4 MB {@code text/html} body of a token and {@code &#32;} went back over the same text for ever). The time
 * limits below only stop a test that would otherwise never end; they measure nothing.
 */
class LargeTextTest {
    private static final String TOKEN = "ghp_R8xq2LmT5vW9zK3nB7cF1hJ4pD6sG0aYeU2i";

    @Test
    void aMatchPast16MiBKeepsItsSpan() throws Exception {
        byte[] text = new byte[(1 << 24) + 4096];
        Arrays.fill(text, (byte) ' ');
        int at = (1 << 24) + 100;
        byte[] token = TOKEN.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(token, 0, text, at, token.length);
        Selection all = RegexConfig.parse(JsonObject.EMPTY_JSON_OBJECT).selection();
        Scan scan = assertTimeoutPreemptively(Duration.ofMinutes(2),
                () -> SecretScanner.scan(ByteBuffer.wrap(text), all, true));
        assertEquals(1, scan.total());
        List<Edit> edits = scan.edits();
        assertEquals(at, edits.get(0).start());
        assertEquals(at + token.length, edits.get(0).end());
    }

    @Test
    void aBodyWhoseReadingsPass16MiBIsScannedToItsEndInBothModes() {
        byte[] body = (TOKEN + "&#32;").repeat(4_000_000 / (TOKEN.length() + 5)).getBytes(StandardCharsets.US_ASCII);
        RegexProvider provider = new RegexProvider();
        JsonObject deny = Json.createObjectBuilder().add("mode", "deny").build();
        HttpRequestResult denied = assertTimeoutPreemptively(Duration.ofMinutes(2), () -> DecodedBodyTest.evaluate(
                provider, deny, body, "content-type", "text/html"));
        assertEquals(Decision.DENY, denied.decision());
        HttpRequestResult redacted = assertTimeoutPreemptively(Duration.ofMinutes(2), () -> DecodedBodyTest.evaluate(
                provider, JsonObject.EMPTY_JSON_OBJECT, body, "content-type", "text/html"));
        String out = new String(redacted.body().orElseThrow().toByteArray(), StandardCharsets.US_ASCII);
        assertEquals(-1, out.indexOf("R8xq2LmT5"), "every token redacted");
    }
}
