package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every catalog entry against its own samples ({@link CatalogSamples}): each true positive is found by the entry
 * alone, exactly where the secret is, and by the whole catalog; each near miss is not found by the entry.
 */
class CatalogSamplesTest {
    static List<CatalogSamples.Sample> positives() {
        return CatalogSamples.positives();
    }

    static List<CatalogSamples.Sample> nearMisses() {
        return CatalogSamples.nearMisses();
    }

    static Scan scan(String text, Selection selection) {
        return SecretScanner.scan(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)), selection, true);
    }

    static String redacted(String text, Scan scan) {
        byte[] out = scan.redacted(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
        return out == null ? text : new String(out, StandardCharsets.UTF_8);
    }

    @Test
    void everyEntryHasATruePositiveAndANearMiss() {
        Set<String> missing = new TreeSet<>();
        for (Rule r : Catalog.get().rules()) {
            boolean tp = CatalogSamples.ALL.stream().anyMatch(s -> s.id().equals(r.id()) && s.positive());
            boolean near = CatalogSamples.ALL.stream().anyMatch(s -> s.id().equals(r.id()) && !s.positive());
            if (!tp || !near) {
                missing.add(r.id());
            }
        }
        assertEquals(Set.of(), missing, "entries without a true positive or a near miss");
        Set<String> unknown = CatalogSamples.ALL.stream().map(CatalogSamples.Sample::id)
                .filter(id -> Catalog.get().byId(id) == null).collect(Collectors.toSet());
        assertEquals(Set.of(), unknown, "samples of entries the catalog does not have");
    }

    @Test
    void theCatalogHasAtLeast200Formats() {
        assertTrue(Catalog.get().rules().size() >= 200, "entries: " + Catalog.get().rules().size());
    }

    @ParameterizedTest
    @MethodSource("positives")
    void theEntryAloneFindsExactlyItsSecret(CatalogSamples.Sample s) {
        String text = "see: " + s.text() + " (end)";
        Scan scan = scan(text, Selection.of(List.of(s.rule())));
        assertEquals(Map.of(s.id(), 1), scan.byId(), s + ": " + text);
        assertEquals("see: " + s.redacted() + " (end)", redacted(text, scan), s.toString());
    }

    @ParameterizedTest
    @MethodSource("positives")
    void theWholeCatalogRedactsTheSecret(CatalogSamples.Sample s) {
        String text = "line one\n" + s.text() + "\nline three";
        Scan scan = scan(text, Selection.everything());
        assertFalse(scan.isEmpty(), s.toString());
        assertFalse(redacted(text, scan).contains(s.secret()), s + ": the secret survived");
    }

    @ParameterizedTest
    @MethodSource("nearMisses")
    void aNearMissIsNotFoundByItsEntry(CatalogSamples.Sample s) {
        String text = "see: " + s.text() + " (end)";
        Scan scan = scan(text, Selection.of(List.of(s.rule())));
        assertEquals(Map.of(), scan.byId(), s + ": " + text);
    }

    @Test
    void aValidChecksumRaisesConfidenceAndAnInvalidOneStillRedacts() {
        String valid = CatalogSamples.ALL.stream().filter(s -> s.id().equals("npm_token") && s.positive())
                .map(CatalogSamples.Sample::token).filter(t -> TokenChecks.valid(Rule.Checksum.CRC32_BASE62,
                        ByteBuffer.wrap(t.getBytes(StandardCharsets.US_ASCII)), 4, t.length()))
                .findFirst().orElseThrow();
        String invalid = valid.substring(0, valid.length() - 1) + (valid.endsWith("0") ? "1" : "0");
        RegexProvider provider = new RegexProvider();
        HttpRequestResult ok = RegexProviderTest.evaluate(provider, Json.createObjectBuilder().build(),
                Body.ofUtf8("token " + valid));
        assertEquals(List.of(new Finding("secret.npm_token", "npm access token", 1, "high", "high")), ok.findings());
        HttpRequestResult bad = RegexProviderTest.evaluate(provider, Json.createObjectBuilder().build(),
                Body.ofUtf8("token " + invalid + " and " + valid));
        assertEquals(List.of(new Finding("secret.npm_token", "npm access token", 2, "", "high")), bad.findings());
        assertEquals("token [REDACTED:npm_token] and [REDACTED:npm_token]",
                bad.body().orElseThrow().utf8().orElseThrow());
    }

    @Test
    void githubsPublishedChecksumSchemeIsRecognised() {
        String payload = "0123456789abcdefghijABCDEFGHIJ";
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(payload.getBytes(StandardCharsets.US_ASCII));
        String token = "ghp_" + payload + TokenChecks.base62(crc.getValue(), 6);
        HttpRequestResult r = RegexProviderTest.evaluate(new RegexProvider(), Json.createObjectBuilder().build(),
                Body.ofUtf8(token));
        assertEquals("high", r.findings().getFirst().confidence());
    }

    @Test
    void moreThan32KindsEndInOneOtherFinding() {
        List<String> parts = new ArrayList<>();
        Set<String> seen = new java.util.LinkedHashSet<>();
        for (CatalogSamples.Sample s : positives()) {
            if (s.rule().kind() == Rule.Kind.PREFIX && seen.size() < 40 && seen.add(s.id())) {
                parts.add(s.text());
            }
        }
        HttpRequestResult r = RegexProviderTest.evaluate(new RegexProvider(),
                RegexProviderTest.json("{\"patterns\":[" + seen.stream().limit(40).map(i -> "\"" + i + "\"")
                        .collect(Collectors.joining(",")) + "]}"), Body.ofUtf8(String.join("\n", parts)));
        assertEquals(32, r.findings().size());
        Finding last = r.findings().getLast();
        assertEquals(RegexProvider.OTHER_TYPE, last.type());
        assertEquals(Long.parseLong(r.metadata().get("matches")), r.findings().stream().mapToLong(Finding::count).sum());
    }
}
