package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Laws of the scanner over generated bodies. */
class SecretScannerPropertyTest {
    /** Filler that cannot form or touch a secret: lowercase letters, digits, spaces and JSON punctuation. */
    @Provide
    Arbitrary<String> filler() {
        return Arbitraries.strings().withCharRange('a', 'z').withCharRange('0', '9')
                .withChars(' ', ',', '.', ':', '{', '}', '"', '\u00e9', '\u4e2d').ofMaxLength(40);
    }

    @Provide
    Arbitrary<List<SecretKind>> kinds() {
        return Arbitraries.of(SecretKind.class).list().ofMaxSize(8);
    }

    @Property(tries = 500)
    void everyEmbeddedSecretIsCountedAndNoneSurvivesRedaction(@ForAll("kinds") List<SecretKind> secrets,
                                                              @ForAll("fillers") List<String> fillers) {
        StringBuilder body = new StringBuilder();
        Map<SecretKind, Integer> expected = new EnumMap<>(SecretKind.class);
        for (int i = 0; i < secrets.size(); i++) {
            body.append(fillers.get(i % fillers.size())).append(' ').append(Samples.ONE_OF_EACH.get(secrets.get(i)))
                    .append(' ');
            expected.merge(secrets.get(i), 1, Integer::sum);
        }
        body.append(fillers.getFirst());
        SecretScanner.Scan scan = SecretScanner.scan(body.toString(), SecretScanner.all(), true);
        assertEquals(expected, scan.counts());
        for (SecretKind k : secrets) {
            assertFalse(scan.text().contains(Samples.ONE_OF_EACH.get(k)), k.id());
        }
        SecretScanner.Scan again = SecretScanner.scan(scan.text(), SecretScanner.all(), true);
        assertEquals(Map.of(), again.counts(), "redacted text holds nothing detectable");
        assertSame(scan.text(), again.text(), "redaction is idempotent");
    }

    @Provide
    Arbitrary<List<String>> fillers() {
        return filler().list().ofMinSize(1).ofMaxSize(4);
    }

    @Property(tries = 1000)
    void textWithoutMatchesIsReturnedUntouched(@ForAll String text) {
        SecretScanner.Scan scan = SecretScanner.scan(text, SecretScanner.all(), true);
        if (scan.counts().isEmpty()) {
            assertSame(text, scan.text());
        }
    }

    @Property(tries = 300)
    void redactionOnlyReplacesMatchesAndKeepsEverythingElse(@ForAll("filler") String before,
                                                           @ForAll("filler") String after,
                                                           @ForAll SecretKind kind) {
        String text = before + " " + Samples.ONE_OF_EACH.get(kind) + " " + after;
        assertEquals(before + " " + kind.placeholder() + " " + after,
                SecretScanner.scan(text, SecretScanner.all(), true).text());
    }
}
