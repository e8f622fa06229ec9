package dev.openshell.middleware.spi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The contract's grammars against independent regular expressions written from the specs. */
class SyntaxTest {
    /** RFC 9110, section 5.6.2, spelled out as the RFC lists it. */
    private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+\\-.^_`|~0-9A-Za-z]+");
    private static final Pattern CODE = Pattern.compile("[a-z][a-z0-9_]{0,63}");
    /** OpenShell's registration-name rule. */
    private static final Pattern REGISTRATION = Pattern.compile("[A-Za-z0-9._/-]{1,128}");

    @Provide
    Arbitrary<String> nearTokens() {
        // every tchar, the separators RFC 9110 excludes, controls, DEL and a few non-ASCII chars
        return Arbitraries.strings().withCharRange((char) 0, (char) 0x7f).withChars("\u00e9\u0130\u212a\uff21")
                .ofMinLength(0).ofMaxLength(8);
    }

    @Property
    void tokenIsRfc9110Token(@ForAll("nearTokens") String s) {
        assertEquals(TOKEN.matcher(s).matches(), Syntax.isToken(s), s);
    }

    @Property
    void tcharIsOneCharToken(@ForAll char c) {
        assertEquals(TOKEN.matcher(String.valueOf(c)).matches(), Syntax.isTchar(c), "char " + (int) c);
    }

    @Provide
    Arbitrary<String> nearCodes() {
        return Arbitraries.strings().withChars("az09_AZ-. \u0131").ofMinLength(0).ofMaxLength(70);
    }

    @Property
    void codeGrammar(@ForAll("nearCodes") String s) {
        assertEquals(CODE.matcher(s).matches(), Syntax.isCode(s), s);
    }

    @Property
    void safeCodeIsAlwaysACodeAndKeepsCodes(@ForAll("nearCodes") String s) {
        String safe = Syntax.safeCode(s);
        assertTrue(Syntax.isCode(safe));
        assertEquals(Syntax.isCode(s) ? s : Syntax.INVALID_CODE, safe);
    }

    @Example
    void codeExamples() {
        assertTrue(Syntax.isCode("secret_detected"));
        assertTrue(Syntax.isCode("a1"));
        assertTrue(Syntax.isCode("a".repeat(64)));
        assertFalse(Syntax.isCode(""));
        assertFalse(Syntax.isCode("1abc"));
        assertFalse(Syntax.isCode("Secret"));
        assertFalse(Syntax.isCode("a-b"));
        assertFalse(Syntax.isCode("a".repeat(65)));
        assertEquals("invalid_code", Syntax.safeCode("Secret"), "no case folding: Secret is not a code");
    }

    @Provide
    Arbitrary<String> nearNames() {
        Arbitrary<String> body = Arbitraries.strings().withChars("aZ09._/-: \u00e9").ofMinLength(0).ofMaxLength(140);
        return Arbitraries.oneOf(body, body.map(b -> "openshell/" + b), body.map(b -> "OpenShell/" + b),
                Arbitraries.strings().withChars("ab").ofLength(128), Arbitraries.strings().withChars("ab").ofLength(129));
    }

    @Property
    void registrationNameIsOpenShellsRule(@ForAll("nearNames") String name) {
        boolean expected = REGISTRATION.matcher(name).matches() && !name.startsWith("openshell/");
        assertEquals(expected, Syntax.isRegistrationName(name), name);
        assertEquals(expected, Syntax.registrationNameProblem(name) == null, name);
    }

    @Example
    void registrationNamesWrittenForOpenShellLoad() {
        assertNull(Syntax.registrationNameProblem("anonymizer"));
        assertNull(Syntax.registrationNameProblem("acme/pii-redactor.v2"));
        assertNull(Syntax.registrationNameProblem("x".repeat(128)), "128 bytes is the limit, not 64");
        assertNull(Syntax.registrationNameProblem("openshellish"));
        assertEquals("it is longer than 128 bytes", Syntax.registrationNameProblem("x".repeat(129)));
        assertEquals("the prefix openshell/ is reserved for built-ins",
                Syntax.registrationNameProblem("openshell/regex"));
        assertEquals("only letters, digits, '.', '_', '-' and '/' are allowed",
                Syntax.registrationNameProblem("pii guard"));
        assertEquals("it is empty", Syntax.registrationNameProblem(""));
    }
}
