package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws every catalog entry obeys, over its own true positives ({@link CatalogSamples}):
 * <ul>
 *   <li>it never matches inside a longer run of its own characters: with letters and digits added before and after
 *       the secret, the entry finds nothing, or one match spanning the whole run (a token of variable length);</li>
 *   <li>it always matches at a JSON-string, form-field and plain-text boundary, through the whole stage (decoding,
 *       scanning, redaction written back in the body's encoding).</li>
 * </ul>
 */
class CatalogPropertyTest {
    private static final String LETTERS_AND_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private final RegexProvider provider = new RegexProvider();

    @Provide
    Arbitrary<CatalogSamples.Sample> tokens() {
        return Arbitraries.of(CatalogSamples.positives().stream()
                .filter(s -> s.rule().kind() != Rule.Kind.PEM).toList());
    }

    @Provide
    Arbitrary<CatalogSamples.Sample> samples() {
        return Arbitraries.of(CatalogSamples.positives());
    }

    @Provide
    Arbitrary<String> run() {
        return Arbitraries.strings().withChars(LETTERS_AND_DIGITS.toCharArray()).ofMinLength(0).ofMaxLength(3);
    }

    @Provide
    Arbitrary<String> filler() {
        return Arbitraries.strings().withCharRange('a', 'z').withChars(' ', ',', '.', '\u00e9').ofMaxLength(30);
    }

    @Property(tries = 3000)
    void anEntryNeverMatchesInsideALongerRunOfItsOwnCharacters(@ForAll("tokens") CatalogSamples.Sample s,
                                                               @ForAll("run") String before,
                                                               @ForAll("run") String after) {
        String text = s.text();
        int start = s.textStart();
        int end = start + s.secret().length();
        String longer = text.substring(0, start) + before + s.secret() + after + text.substring(end);
        String body = "one " + longer + " two";
        int runStart = 4 + start;
        int runEnd = runStart + before.length() + s.secret().length() + after.length();
        Scan scan = SecretScanner.scan(ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)),
                Selection.of(List.of(s.rule())), true);
        for (int k = 0; k < scan.spanInts(); k += 3) {
            int ms = scan.spans()[k];
            int me = scan.spans()[k + 1];
            boolean overlapsRun = ms < runEnd && me > runStart;
            if (overlapsRun) {
                assertEquals(List.of(runStart, runEnd), List.of(ms, me),
                        s + ": a match inside the run " + before + "|" + after + " of " + body);
            }
        }
    }

    @Property(tries = 1500)
    void anEntryMatchesAtAJsonStringBoundary(@ForAll("samples") CatalogSamples.Sample s,
                                             @ForAll("filler") String around) {
        JsonObject body = Json.createObjectBuilder().add("messages", Json.createArrayBuilder().add(
                Json.createObjectBuilder().add("role", "user").add("content", around + "\n" + s.text() + "\n"
                        + around))).build();
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, only(s), body.toString()
                .getBytes(StandardCharsets.UTF_8), "content-type", "application/json");
        String out = found(s, r);
        String content = RegexProviderTest.json(out).getJsonArray("messages").getJsonObject(0).getString("content");
        assertEquals(around + "\n" + s.redacted() + "\n" + around, content, s.toString());
    }

    @Property(tries = 1500)
    void anEntryMatchesAtAFormFieldBoundary(@ForAll("samples") CatalogSamples.Sample s,
                                            @ForAll("filler") String around) {
        String body = "user=alice&note=" + URLEncoder.encode(s.text(), StandardCharsets.UTF_8) + "&more="
                + URLEncoder.encode(around, StandardCharsets.UTF_8);
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, only(s), body.getBytes(StandardCharsets.UTF_8),
                "content-type", "application/x-www-form-urlencoded");
        String out = found(s, r);
        String note = URLDecoder.decode(out.substring(out.indexOf("&note=") + 6, out.indexOf("&more=")),
                StandardCharsets.UTF_8);
        assertEquals(s.redacted(), note, s.toString());
    }

    @Property(tries = 1500)
    void anEntryMatchesAtPlainTextBoundaries(@ForAll("samples") CatalogSamples.Sample s,
                                             @ForAll("filler") String around) {
        for (String[] edge : new String[][] {{"", ""}, {around + " ", " " + around}, {around + "\n", "\n"},
            {"\t", ";"}, {"(", ")"}, {"'", "'"}, {"`", "`"}}) {
            String body = edge[0] + s.text() + edge[1];
            HttpRequestResult r = DecodedBodyTest.evaluate(provider, only(s), body.getBytes(StandardCharsets.UTF_8),
                    "content-type", "text/plain; charset=utf-8");
            assertEquals(edge[0] + s.redacted() + edge[1], found(s, r), s + " between " + List.of(edge));
        }
    }

    /** Keyword entries also match a JSON member whose name names the provider's credential. */
    @Property(tries = 1000)
    void aKeywordEntryMatchesAJsonMember(@ForAll("samples") CatalogSamples.Sample s) {
        if (s.key() == null) {
            return;
        }
        String body = Json.createObjectBuilder().add("id", 7).add(s.key(), s.token()).build().toString();
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, only(s), body.getBytes(StandardCharsets.UTF_8),
                "content-type", "application/json");
        String out = found(s, r);
        assertEquals(s.token().substring(0, s.secretStart()) + Samples.placeholder(s.id())
                + s.token().substring(s.secretEnd()), RegexProviderTest.json(out).getString(s.key()), s.toString());
    }

    private static JsonObject only(CatalogSamples.Sample s) {
        return Json.createObjectBuilder().add("patterns", Json.createArrayBuilder().add(s.id())).build();
    }

    private static String found(CatalogSamples.Sample s, HttpRequestResult r) {
        assertEquals(Decision.ALLOW, r.decision(), s.toString());
        assertEquals(List.of("secret." + s.id()), r.findings().stream().map(Finding::type).toList(), s.toString());
        String out = r.body().orElseThrow(() -> new AssertionError(s + ": nothing redacted")).utf8().orElseThrow();
        assertFalse(out.contains(s.secret()), s + ": the secret survived");
        return out;
    }
}
