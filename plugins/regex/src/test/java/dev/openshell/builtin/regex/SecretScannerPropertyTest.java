package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.openshell.middleware.spi.Body;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

/** Laws of the scanner over generated bodies. */
class SecretScannerPropertyTest {
    /** The byte scanner's result seen as text: the redacted text, or the input itself when nothing was redacted. */
    private record TextScan(Map<String, Integer> counts, String text) {
    }

    private static TextScan scan(String text, Selection selection, boolean redact) {
        ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();
        Scan s = SecretScanner.scan(bytes, selection, redact);
        byte[] redacted = s.redacted(bytes);
        return new TextScan(s.byId(), redacted == null ? text : new String(redacted, StandardCharsets.UTF_8));
    }

    static TextScan scan(String text) {
        return scan(text, Selection.defaults(), true);
    }

    /** Filler that cannot form or touch a secret: lowercase letters, digits, spaces and JSON punctuation. */
    @Provide
    Arbitrary<String> filler() {
        return Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9')
                .withChars(' ', ',', '.', ':', '{', '}', '"', '\u00e9', '\u4e2d').ofMaxLength(40);
    }

    @Provide
    Arbitrary<List<String>> kinds() {
        return Arbitraries.of(Samples.LEGACY_IDS).list().ofMaxSize(8);
    }

    @Property(tries = 500)
    void everyEmbeddedSecretIsCountedAndNoneSurvivesRedaction(@ForAll("kinds") List<String> secrets,
                                                              @ForAll("fillers") List<String> fillers) {
        StringBuilder body = new StringBuilder();
        Map<String, Integer> expected = new java.util.HashMap<>();
        for (int i = 0; i < secrets.size(); i++) {
            body.append(fillers.get(i % fillers.size())).append(' ').append(Samples.ONE_OF_EACH.get(secrets.get(i)))
                    .append(' ');
            expected.merge(secrets.get(i), 1, Integer::sum);
        }
        body.append(fillers.getFirst());
        TextScan scan = scan(body.toString());
        assertEquals(expected, scan.counts());
        for (String k : secrets) {
            assertFalse(scan.text().contains(Samples.ONE_OF_EACH.get(k)), k);
        }
        TextScan again = scan(scan.text());
        assertEquals(Map.of(), again.counts(), "redacted text holds nothing detectable");
        assertSame(scan.text(), again.text(), "redaction is idempotent");
    }

    @Provide
    Arbitrary<List<String>> fillers() {
        return filler().list().ofMinSize(1).ofMaxSize(4);
    }

    @Property(tries = 1000)
    void textWithoutMatchesIsReturnedUntouched(@ForAll String text) {
        ByteBuffer bytes = ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
        Scan s = SecretScanner.scan(bytes, Selection.everything(), true);
        if (s.isEmpty()) {
            assertNull(s.redacted(bytes), "no copy is made when nothing matched");
        }
    }

    @Property(tries = 300)
    void redactionOnlyReplacesMatchesAndKeepsEverythingElse(@ForAll("filler") String before,
                                                           @ForAll("filler") String after,
                                                           @ForAll("kind") String kind) {
        String text = before + " " + Samples.ONE_OF_EACH.get(kind) + " " + after;
        assertEquals(before + " " + Samples.placeholder(kind) + " " + after, scan(text).text());
    }

    @Provide
    Arbitrary<String> kind() {
        return Arbitraries.of(Samples.LEGACY_IDS);
    }

    /**
     * Text built from pieces that start, continue, break or border secrets, with non-ASCII characters around them:
     * the places where a byte scanner could disagree with a text scanner.
     */
    @Provide
    Arbitrary<String> tricky() {
        Arbitrary<String> pieces = Arbitraries.oneOf(
                Arbitraries.of(Samples.ONE_OF_EACH.values().toArray(String[]::new)),
                Arbitraries.of("sk-", "sk-ant-", "sk-proj-", "AKIA", "ASIA", "AIza", "gh", "ghp_", "github_pat_",
                        "xox", "xoxb-", "-----BEGIN ", "-----BEGIN RSA PRIVATE KEY-----", "-----END ",
                        "-----END RSA PRIVATE KEY-----", "PRIVATE KEY-----", "-----", "\\n", "\n", "\r\n", " ", "\t",
                        "_", "-", "\\", "=", "+/", "\u00e9", "\u4e2d", "\ud83d\ude00", "\u00c4KIA", "x\u00e9"),
                Arbitraries.strings().withCharRange('A', 'Z').ofMinLength(1).ofMaxLength(40),
                Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9').ofMinLength(1).ofMaxLength(40),
                Arbitraries.strings().ofMaxLength(6));
        return pieces.list().ofMaxSize(14).map(l -> String.join("", l));
    }

    /**
     * Redaction never cuts a UTF-8 sequence and writes one placeholder per counted match, whatever the text. (A
     * second pass may find more: a placeholder can end a token that the secret before it continued.)
     */
    @Property(tries = 2000)
    void redactedTrickyTextIsWellFormedWithOnePlaceholderPerMatch(@ForAll("tricky") String text) {
        String wellFormed = new String(text.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
        TextScan once = scan(wellFormed);
        assertEquals(true, Utf8.isWellFormed(ByteBuffer.wrap(once.text().getBytes(StandardCharsets.UTF_8))));
        int placeholders = once.text().split("\\[REDACTED:", -1).length
                - wellFormed.split("\\[REDACTED:", -1).length;
        assertEquals(once.counts().values().stream().mapToInt(Integer::intValue).sum(), placeholders);
    }

    @Property(tries = 3000)
    void utf8CheckAgreesWithTheStrictJdkDecoder(@ForAll @Size(max = 24) byte[] raw, @ForAll("tricky") String text) {
        assertEquals(Body.of(raw).utf8().isPresent(), Utf8.isWellFormed(ByteBuffer.wrap(raw)), "random bytes");
        byte[] valid = text.getBytes(StandardCharsets.UTF_8);
        assertEquals(true, Utf8.isWellFormed(ByteBuffer.wrap(valid)));
        if (valid.length > 0) {
            // every single-byte corruption of valid text is judged as the JDK judges it
            for (int i = 0; i < valid.length; i++) {
                byte[] bad = valid.clone();
                bad[i] = raw.length > 0 ? raw[i % raw.length] : (byte) 0xff;
                assertEquals(Body.of(bad).utf8().isPresent(), Utf8.isWellFormed(ByteBuffer.wrap(bad)),
                        "corrupted at " + i);
            }
        }
    }
    /**
     * The trigger search reads the body through 16 KiB windows: secrets anywhere in a body of up to 48 KiB, including
     * across and right at window edges, are found exactly as the same secrets in a short body.
     */
    @Property(tries = 200)
    void secretsAcrossTheSearchWindowsAreFoundWherever(@ForAll("kinds") List<String> secrets,
                                                      @ForAll @IntRange(min = 0, max = 3 * 16 * 1024) int start,
                                                      @ForAll @IntRange(min = 0, max = 64) int gap) {
        StringBuilder body = new StringBuilder("x".repeat(start));
        Map<String, Integer> expected = new java.util.HashMap<>();
        for (String k : secrets) {
            body.append(' ').append(Samples.ONE_OF_EACH.get(k)).append(' ').append("y".repeat(gap));
            expected.merge(k, 1, Integer::sum);
        }
        TextScan scan = scan(body.toString());
        assertEquals(expected, scan.counts(), "secrets from offset " + start);
        for (String k : secrets) {
            assertFalse(scan.text().contains(Samples.ONE_OF_EACH.get(k)), k);
        }
        assertEquals(start, scan.text().indexOf(' ') < 0 ? start : scan.text().indexOf(' '),
                "the text before the first secret is kept");
    }
    @org.junit.jupiter.api.Test
    void aSecretStartingAtEachOffsetAroundAWindowEdgeIsFound() {
        for (String k : Samples.LEGACY_IDS) {
            String secret = Samples.ONE_OF_EACH.get(k);
            for (int edge : new int[] {16 * 1024, 32 * 1024}) {
                for (int at = edge - secret.length() - 2; at <= edge + 2; at++) {
                    String body = " ".repeat(at) + secret + " ".repeat(40);
                    assertEquals(Map.of(k, 1), scan(body).counts(), k + " at offset " + at);
                }
            }
        }
    }
}
