package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpRequestResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Operator patterns ({@code custom_patterns}): what they find and redact, and what validation refuses. */
class CustomPatternsTest {
    private static final BindingId ID = new BindingId("openshell/regex");
    private static final String ACME = "acme_0123456789abcdef0123456789abcdef01234567";
    private final RegexProvider provider = new RegexProvider();

    private HttpRequestResult run(String config, String body) {
        return RegexProviderTest.evaluate(provider, RegexProviderTest.json(config), Body.ofUtf8(body));
    }

    private static String text(HttpRequestResult r) {
        return r.body().orElseThrow().utf8().orElseThrow();
    }

    @Test
    void anOperatorPatternIsFoundAndRedactedWithItsId() {
        HttpRequestResult r = run("{\"custom_patterns\":[{\"id\":\"acme_token\",\"regex\":\"acme_[0-9a-f]{40}\"}]}",
                "{\"prompt\":\"use " + ACME + " and AKIAIOSFODNN7EXAMPLE\"}");
        assertEquals("{\"prompt\":\"use [REDACTED:acme_token] and [REDACTED:aws_access_key_id]\"}", text(r));
        assertEquals(List.of(new Finding("secret.aws_access_key_id", "AWS access key ID", 1, "", "high"),
                new Finding("secret.acme_token", "Custom pattern acme_token", 1, "", "high")), r.findings());
        assertEquals("2", r.metadata().get("matches"));
    }

    @Test
    void groupOneIsTheSecretWhenThereIsOne() {
        HttpRequestResult r = run("{\"custom_patterns\":[{\"id\":\"acme_key\","
                + "\"regex\":\"ACME_KEY=([A-Za-z0-9]{24})\"}]}", "ACME_KEY=Zx8Qm3Lr7Tb2Wn5Yc9Hd4Kf6 rest");
        assertEquals("ACME_KEY=[REDACTED:acme_key] rest", text(r));
    }

    @Test
    void aKeywordLimitsTheSearchToTheTextAfterIt() {
        String config = "{\"custom_patterns\":[{\"id\":\"acme_pin\",\"regex\":\"[0-9]{8}\",\"keyword\":\"PIN\"}]}";
        assertEquals("my pin: [REDACTED:acme_pin], and [REDACTED:acme_pin]",
                text(run(config, "my pin: 48213957, and 12345678")), "within 512 characters after the keyword");
        String far = "12345678 " + "x".repeat(600) + " pin";
        assertEquals(HttpRequestResult.allow(), run(config, far), "before the keyword, or beyond its window");
    }

    @Test
    void anEntropyFloorKeepsPlaceholders() {
        String config = "{\"custom_patterns\":[{\"id\":\"acme_secret\",\"regex\":\"acme-[a-z0-9]{16}\","
                + "\"entropy\":3}]}";
        assertEquals(HttpRequestResult.allow(), run(config, "acme-aaaaaaaaaaaaaaaa"));
        assertEquals("[REDACTED:acme_secret]", text(run(config, "acme-k3j9x2m7q8w1z5r4")));
    }

    @Test
    void aMatchOverlappingACatalogMatchOrHoldingNonAsciiIsNotCounted() {
        HttpRequestResult r = run("{\"custom_patterns\":[{\"id\":\"wide\",\"regex\":\"AKIA[A-Z0-9]+\"},"
                + "{\"id\":\"accent\",\"regex\":\"caf.\"}]}", "AKIAIOSFODNN7EXAMPLE caf\u00e9");
        assertEquals("[REDACTED:aws_access_key_id] caf\u00e9", text(r));
        assertEquals(1, r.findings().size());
    }

    @Test
    void denyModeNamesTheOperatorPattern() {
        HttpRequestResult r = run("{\"mode\":\"deny\",\"custom_patterns\":[{\"id\":\"acme_token\","
                + "\"regex\":\"acme_[0-9a-f]{40}\"}]}", ACME);
        assertEquals(Decision.DENY, r.decision());
        assertEquals("request body contains secrets: acme_token", r.reason());
    }

    @Test
    void invalidOperatorPatternsAreRefusedWithTheirEntryAndPosition() {
        String p = "openshell/regex: custom_patterns[";
        Map<String, String> cases = Map.ofEntries(
                Map.entry("[{\"id\":\"acme\",\"regex\":\"(a+)\\\\1\"}]",
                        p + "0]: backreference at char 5 needs backtracking"),
                Map.entry("[{\"id\":\"ok\",\"regex\":\"x{3}\"},{\"id\":\"look\",\"regex\":\"acme(?=_)\"}]",
                        p + "1]: lookaround at char 5 needs backtracking"),
                Map.entry("[{\"id\":\"behind\",\"regex\":\"(?<=key=)[a-z]+\"}]",
                        p + "0]: lookaround at char 1 needs backtracking"),
                Map.entry("[{\"id\":\"empty\",\"regex\":\"a*\"}]", p + "0].regex matches the empty text (so everywhere)"),
                Map.entry("[{\"id\":\"github\",\"regex\":\"x+\"}]",
                        p + "0].id 'github' is already in use"),
                Map.entry("[{\"id\":\"Bad-Id\",\"regex\":\"x+\"}]", p + "0].id must be 2 to 64 of a-z 0-9 _"),
                Map.entry("[{\"id\":\"acme\",\"regex\":\"x+\",\"label\":\"y\"}]",
                        p + "0]: unknown key 'label'"),
                Map.entry("[{\"id\":\"acme\",\"regex\":\"x+\",\"keyword\":\"ab\"}]",
                        p + "0].keyword must be 3 to 64 printable ASCII"),
                Map.entry("[{\"id\":\"acme\",\"regex\":\"x+\",\"entropy\":9}]",
                        p + "0].entropy must be 0 to 7 (bits per character)"),
                Map.entry("[]", "openshell/regex: custom_patterns must be a list of 1 to 32 objects"));
        cases.forEach((list, message) -> {
            ConfigValidation v = provider.validateConfig(ID, RegexProviderTest.json("{\"custom_patterns\":" + list
                    + "}"));
            assertFalse(v.valid(), list);
            assertEquals(message, v.reason(), list);
            assertTrue(message.length() <= 80, "the policy reader shows 80 characters: " + message);
        });
        ConfigValidation syntax = provider.validateConfig(ID, RegexProviderTest.json(
                "{\"custom_patterns\":[{\"id\":\"acme\",\"regex\":\"acme_[0-9\"}]}"));
        assertEquals(p + "0].regex: missing closing ] at char 6", syntax.reason());
    }
}
