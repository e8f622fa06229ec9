package dev.openshell.examples.privacyguard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.StringLength;

class PiiScannerTest {
    @Example
    void findsAndRedactsTheUsualShapes() {
        var r = PiiScanner.scan("Write to jane.doe+ai@mail.example.co.uk or call +1 415 555 0100, "
                + "(415) 555-0100, 415-555-0100, +44 20 7946 0958 or +49 30 1234567.", true);
        assertEquals(1, r.emails());
        assertEquals(5, r.phones());
        assertEquals("Write to [email] or call [phone], [phone], [phone], [phone] or [phone].", r.text());
    }

    @Example
    void leavesDatesVersionsAddressesAndLongNumbersAlone() {
        String text = "On 2024-01-15 at 10:30 v10.20.300 from 192.168.1.100 paid 4111 1111 1111 1111 "
                + "costs 1234567 tokens; user@localhost; a@b.c; x@y.123";
        var r = PiiScanner.scan(text, true);
        assertEquals(0, r.emails(), r.text());
        assertEquals(0, r.phones(), r.text());
        assertEquals(text, r.text());
    }

    @Example
    void countsWithoutRedactingWhenAsked() {
        var r = PiiScanner.scan("a@b.example and bob@c.example", false);
        assertEquals(2, r.emails());
        assertEquals("a@b.example and bob@c.example", r.text());
    }

    @Provide
    Arbitrary<String> email() {
        Arbitrary<String> local = Arbitraries.strings().withChars("abcxyz0189._%+-").ofMinLength(1).ofMaxLength(20)
                .filter(s -> Character.isLetterOrDigit(s.charAt(0)));
        Arbitrary<String> label = Arbitraries.strings().withChars("abcdefgh0123-").ofMinLength(1).ofMaxLength(10)
                .filter(s -> Character.isLetterOrDigit(s.charAt(0)) && Character.isLetterOrDigit(
                        s.charAt(s.length() - 1)));
        Arbitrary<String> tld = Arbitraries.strings().alpha().ofMinLength(2).ofMaxLength(6);
        return Combinators.combine(local, label, tld).as((l, d, t) -> l + "@" + d + "." + t);
    }

    @Property
    void anEmbeddedAddressIsAlwaysFoundAndNeverSurvivesRedaction(@ForAll("email") String email,
            @ForAll @StringLength(max = 30) @Chars({' ', ',', ';', '(', ')', '\n'}) @AlphaChars String before,
            @ForAll @StringLength(max = 30) @Chars({' ', ',', ';', '(', ')', '\n'}) @AlphaChars String after) {
        String text = before + " " + email + " " + after;
        var r = PiiScanner.scan(text, true);
        assertEquals(1, r.emails(), text);
        assertFalse(r.text().contains(email), r.text());
        assertTrue(r.text().contains(PiiScanner.EMAIL_PLACEHOLDER));
    }

    @Property
    void textWithoutAtSignsOrDigitsIsNeverTouched(@ForAll @StringLength(max = 200) String text) {
        String clean = text.replaceAll("[@0-9]", "");
        var r = PiiScanner.scan(clean, true);
        assertEquals(0, r.emails() + r.phones());
        assertEquals(clean, r.text());
    }

    @Provide
    Arbitrary<String> tricky() {
        return Arbitraries.strings().withChars("ab9@.-_+() x1\n").ofMaxLength(120);
    }

    @Property
    void redactedTextHoldsNothingLeftToFind(@ForAll("tricky") String text) {
        var first = PiiScanner.scan(text, true);
        var again = PiiScanner.scan(first.text(), true);
        assertEquals(0, again.emails() + again.phones(), () -> text + " -> " + first.text());
        assertEquals(first.emails() + first.phones() == 0, first.text().equals(text));
        var counted = PiiScanner.scan(text, false);
        assertEquals(first.emails(), counted.emails(), "counting and redacting agree");
        assertEquals(text, counted.text());
    }

    @Example
    void anAddressRightAfterAnInvalidOneIsStillFound() {
        assertEquals(1, PiiScanner.scan("a@b.c1@d.example", true).emails());
        assertEquals(1, PiiScanner.scan("x@@bob@corp.example", true).emails());
        assertEquals("[email].", PiiScanner.scan("bob@corp.example.", true).text());
        assertEquals(0, PiiScanner.scan("bob@corp..example", true).emails());
        assertEquals(0, PiiScanner.scan(("a".repeat(65)) + "@corp.example", true).emails(), "local part over 64");
        assertEquals(1, PiiScanner.scan(("a".repeat(64)) + "@corp.example", true).emails());
    }

    @Example
    void longAdversarialRunsDoNotBacktrack() {
        // 4 MiB of candidates that never complete: a linear scan finishes, a backtracking one would not end
        String local = "a".repeat(2 * 1024 * 1024) + "@" + "b.".repeat(1024 * 1024);
        var r = PiiScanner.scan(local, true);
        assertEquals(0, r.emails());
        String digits = "1-".repeat(2 * 1024 * 1024);
        assertEquals(0, PiiScanner.scan(digits, true).phones());
    }
}
