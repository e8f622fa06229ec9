package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HeaderRulesTest {
    private final HeaderRules rules = new HeaderRules();

    private static HeaderMutation write(String name, String value) {
        return HeaderMutation.write(name, value, ExistingHeaderAction.APPEND);
    }

    private HeaderMutationError rejected(List<HttpHeader> existing, Set<String> nominated, List<HeaderMutation> ms) {
        return assertInstanceOf(MutationOutcome.Rejected.class, rules.apply(existing, nominated, ms)).error();
    }

    private List<HttpHeader> applied(List<HttpHeader> existing, List<HeaderMutation> ms) {
        return assertInstanceOf(MutationOutcome.Applied.class, rules.apply(existing, Set.of(), ms)).headers();
    }

    // ------------------------------------------------------------------ tokens and values

    @Test
    void tokenCharactersAreExactlyRfc9110s() {
        for (char c = 0; c < 256; c++) {
            boolean expected = Character.isLetterOrDigit(c) && c < 128 || "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
            assertEquals(expected, dev.openshell.middleware.spi.internal.Syntax.isToken(String.valueOf(c)), "char " + (int) c);
        }
        assertFalse(dev.openshell.middleware.spi.internal.Syntax.isToken(""));
    }

    @Test
    void safeValuesAllowTabPrintableAndNonAsciiOnly() {
        for (char c = 0; c < 0x100; c++) {
            boolean expected = c == '\t' || (c >= 0x20 && c != 0x7f);
            assertEquals(expected, HeaderRules.isSafeValue("a" + c + "b"), "char " + (int) c);
        }
        assertTrue(HeaderRules.isSafeValue("caf\u00e9 \uD83D\uDE00"), "a surrogate pair is one code point");
        assertFalse(HeaderRules.isSafeValue("x\uD83D"), "unpaired high surrogate");
        assertFalse(HeaderRules.isSafeValue("\uDE00x"), "unpaired low surrogate");
    }

    // ------------------------------------------------------------------ parsing

    @Test
    void parsingLowercasesNamesTrimsValuesAndKeepsOrderAndDuplicates() {
        assertEquals(List.of(new HttpHeader("x-a", "1"), new HttpHeader("accept", "text/plain"),
                        new HttpHeader("x-a", "two words"), new HttpHeader("x-empty", "")),
                HeaderRules.parseFieldLines("X-A: 1\r\nAccept:\ttext/plain \t\r\nx-a:  two words\r\nX-Empty:\r\n\r\n"
                        + "ignored: after the end\r\n"));
    }

    @Test
    void parsingAcceptsASectionWithoutTheFinalEmptyLine() {
        assertEquals(List.of(new HttpHeader("a", "b")), HeaderRules.parseFieldLines("A: b"));
        assertEquals(List.of(), HeaderRules.parseFieldLines(""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"X-A: b\nX-B: c\r\n", "X-A: b\rc\r\n", "X-A: b\u0000c\r\n", ": empty name\r\n",
        "\tX-A: tab fold\r\n", "X-A\t: tab before colon\r\n", "X-A: del\u007f\r\n"})
    void parsingRejectsMalformedLines(String section) {
        MalformedHeaderException e = assertThrows(MalformedHeaderException.class,
                () -> HeaderRules.parseFieldLines(section));
        assertEquals(1, e.line());
        assertTrue(e.getMessage().startsWith("malformed header field on line 1: "), e.getMessage());
    }

    @Test
    void parsingReportsTheLineNumber() {
        assertEquals(3, assertThrows(MalformedHeaderException.class,
                () -> HeaderRules.parseFieldLines("A: 1\r\nB: 2\r\nC 3\r\n")).line());
    }

    @Test
    void connectionNominatedNamesAreTrimmedLowercasedSortedAndUnique() {
        List<HttpHeader> headers = List.of(new HttpHeader("connection", " X-B ,, keep-alive"),
                new HttpHeader("Connection", "x-a,x-b"), new HttpHeader("x-a", "1"));
        assertEquals(List.of("keep-alive", "x-a", "x-b"), List.copyOf(HeaderRules.connectionNominated(headers)));
        assertEquals(Set.of(), HeaderRules.connectionNominated(List.of(new HttpHeader("accept", "*/*"))));
    }

    // ------------------------------------------------------------------ spoofed middleware output

    @Test
    void spoofedMiddlewareHeadersAreStrippedAndCounted() {
        List<HttpHeader> in = List.of(new HttpHeader("accept", "*/*"),
                new HttpHeader("X-OpenShell-Middleware-Checked", "true"), new HttpHeader("x-request-id", "1"),
                new HttpHeader("x-openshell-middleware-tag", "forged"));
        StrippedHeaders out = HeaderRules.stripMiddlewareNamespace(in);
        assertEquals(List.of(new HttpHeader("accept", "*/*"), new HttpHeader("x-request-id", "1")), out.headers());
        assertEquals(2, out.stripped());
        assertTrue(out.spoofed());
    }

    @Test
    void aRequestWithoutSpoofedHeadersIsReturnedAsIs() {
        List<HttpHeader> in = List.of(new HttpHeader("x-openshell-middlewar", "near miss"));
        StrippedHeaders out = HeaderRules.stripMiddlewareNamespace(in);
        assertSame(in, out.headers());
        assertFalse(out.spoofed());
    }

    // ------------------------------------------------------------------ mutation rules

    @Test
    void checkOrderForWritesIsNameProtectedNominatedNamespaceValueSizeAction() {
        Set<String> nominated = Set.of("x-openshell-middleware-hop", "x-hop");
        assertEquals(HeaderMutationError.Kind.INVALID_NAME, rejected(List.of(), nominated,
                List.of(HeaderMutation.write("bad name", "\r\n", ExistingHeaderAction.UNSPECIFIED))).kind());
        assertEquals(HeaderMutationError.Kind.PROTECTED, rejected(List.of(), Set.of("cookie"),
                List.of(HeaderMutation.write("Cookie", "\r\n", ExistingHeaderAction.UNSPECIFIED))).kind());
        assertEquals(HeaderMutationError.Kind.HOP_BY_HOP, rejected(List.of(), nominated,
                List.of(HeaderMutation.write("x-hop", "\r\n", ExistingHeaderAction.UNSPECIFIED))).kind());
        assertEquals(HeaderMutationError.Kind.WRITE_NAMESPACE, rejected(List.of(), nominated,
                List.of(HeaderMutation.write("x-trace", "\r\n", ExistingHeaderAction.UNSPECIFIED))).kind());
        assertEquals(HeaderMutationError.Kind.UNSAFE_VALUE, rejected(List.of(), nominated,
                List.of(HeaderMutation.write("x-openshell-middleware-a", "\r\n", ExistingHeaderAction.UNSPECIFIED)))
                .kind());
        assertEquals(HeaderMutationError.Kind.TOO_LARGE, rejected(List.of(), nominated,
                List.of(HeaderMutation.write("x-openshell-middleware-a", "v".repeat(40_000),
                        ExistingHeaderAction.UNSPECIFIED))).kind());
        HeaderMutationError missing = rejected(List.of(), nominated,
                List.of(HeaderMutation.write("X-OpenShell-Middleware-A", "v", ExistingHeaderAction.UNSPECIFIED)));
        assertEquals(HeaderMutationError.Kind.MISSING_EXISTING_ACTION, missing.kind());
        assertEquals("middleware must specify on_existing for header 'X-OpenShell-Middleware-A'", missing.message());
        assertEquals(HeaderMutationError.Kind.INVALID_EXISTING_ACTION, rejected(List.of(), nominated,
                List.of(HeaderMutation.write("x-openshell-middleware-a", "v", ExistingHeaderAction.UNRECOGNIZED)))
                .kind());
    }

    @Test
    void removesMayTargetAnyVisibleHeaderButNotProtectedOrNominatedOnes() {
        List<HttpHeader> existing = List.of(new HttpHeader("x-trace", "1"), new HttpHeader("accept", "*/*"));
        assertEquals(List.of(new HttpHeader("x-trace", "1")), applied(existing, List.of(HeaderMutation.remove("Accept"))));
        assertEquals(existing, applied(existing, List.of(HeaderMutation.remove("x-absent"))));
        for (String name : List.of("host", "content-length", "transfer-encoding", "te", "x-amz-date",
                "x-openshell-credential-token", "proxy-authorization")) {
            assertEquals(HeaderMutationError.Kind.PROTECTED,
                    rejected(existing, Set.of(), List.of(HeaderMutation.remove(name))).kind(), name);
        }
        assertEquals(HeaderMutationError.Kind.INVALID_NAME,
                rejected(existing, Set.of(), List.of(HeaderMutation.remove(""))).kind());
    }

    @Test
    void oneInvalidMutationAnywhereRejectsAllAndReportsTheFirst() {
        List<HttpHeader> existing = List.of(new HttpHeader("accept", "*/*"));
        HeaderMutationError e = rejected(existing, Set.of(), List.of(write("x-openshell-middleware-a", "1"),
                HeaderMutation.remove("accept"), write("x-trace", "2"), write("authorization", "3")));
        assertEquals(HeaderMutationError.Kind.WRITE_NAMESPACE, e.kind());
        assertEquals("x-trace", e.name());
    }

    @Test
    void mutationCountLimitIsSixtyFourAtLimitAndOverLimit() {
        List<HeaderMutation> atLimit = new ArrayList<>(Collections.nCopies(EnvelopeLimits.MAX_HEADER_MUTATIONS,
                write("x-openshell-middleware-n", "v")));
        assertEquals(64, applied(List.of(), atLimit).size());
        atLimit.add(write("x-openshell-middleware-n", "v"));
        HeaderMutationError e = rejected(List.of(), Set.of(), atLimit);
        assertEquals("middleware returned too many header mutations: 65 exceeds 64", e.message());
        assertEquals("header_mutation_count_over_capacity", e.code());
    }

    @Test
    void mutationCountIsCheckedBeforeAnythingElse() {
        List<HeaderMutation> ms = new ArrayList<>(Collections.nCopies(65, HeaderMutation.remove("authorization")));
        assertEquals(HeaderMutationError.Kind.TOO_MANY, rejected(List.of(), Set.of(), ms).kind());
    }

    @Test
    void validatedBytesLimitIs32KiBOfLowercasedNamesPlusValuesAtLimitAndOverLimit() {
        String name = "X-OpenShell-Middleware-Big";
        int valueBytes = EnvelopeLimits.MAX_HEADER_MUTATION_BYTES - name.length() - "x-trace".length();
        List<HeaderMutation> atLimit = List.of(write(name, "v".repeat(valueBytes)), HeaderMutation.remove("X-Trace"));
        assertInstanceOf(MutationOutcome.Applied.class, rules.apply(List.of(), Set.of(), atLimit));
        List<HeaderMutation> over = List.of(write(name, "v".repeat(valueBytes + 1)), HeaderMutation.remove("X-Trace"));
        HeaderMutationError e = rejected(List.of(), Set.of(), over);
        assertEquals("middleware header mutations exceed 32768 bytes", e.message());
        assertEquals("header_mutation_bytes_over_capacity", e.code());
    }

    @Test
    void valueBytesAreCountedInUtf8() {
        String name = "x-openshell-middleware-u";
        int room = EnvelopeLimits.MAX_HEADER_MUTATION_BYTES - name.length();
        assertInstanceOf(MutationOutcome.Applied.class,
                rules.apply(List.of(), Set.of(), List.of(write(name, "\u00e9".repeat(room / 2)))));
        assertEquals(HeaderMutationError.Kind.TOO_LARGE,
                rejected(List.of(), Set.of(), List.of(write(name, "\u00e9".repeat(room / 2 + 1)))).kind());
    }

    @Test
    void writtenNamesAreStoredLowercased() {
        assertEquals(List.of(new HttpHeader("x-openshell-middleware-tag", "v")),
                applied(List.of(), List.of(write("X-OPENSHELL-MIDDLEWARE-TAG", "v"))));
    }

    @Test
    void allThreeActionsAddAnAbsentHeader() {
        for (ExistingHeaderAction a : List.of(ExistingHeaderAction.APPEND, ExistingHeaderAction.OVERWRITE,
                ExistingHeaderAction.SKIP)) {
            assertEquals(List.of(new HttpHeader("accept", "*/*"), new HttpHeader("x-openshell-middleware-t", "v")),
                    applied(List.of(new HttpHeader("accept", "*/*")),
                            List.of(HeaderMutation.write("x-openshell-middleware-t", "v", a))), a.name());
        }
    }

    @Test
    void mutationsApplyInOrderWithinAStage() {
        List<HttpHeader> out = applied(List.of(), List.of(write("x-openshell-middleware-a", "1"),
                HeaderMutation.write("x-openshell-middleware-a", "2", ExistingHeaderAction.SKIP),
                HeaderMutation.remove("x-openshell-middleware-a"), write("x-openshell-middleware-a", "3")));
        assertEquals(List.of(new HttpHeader("x-openshell-middleware-a", "3")), out);
    }

    @Test
    void rejectionsAreCountedPerKind() {
        rejected(List.of(), Set.of(), List.of(write("authorization", "x")));
        rejected(List.of(), Set.of(), List.of(HeaderMutation.remove("host")));
        rejected(List.of(), Set.of(), List.of(write("x-a", "x")));
        assertEquals(2, rules.rejections(HeaderMutationError.Kind.PROTECTED));
        assertEquals(1, rules.rejections(HeaderMutationError.Kind.WRITE_NAMESPACE));
        assertEquals(0, rules.rejections(HeaderMutationError.Kind.UNSAFE_VALUE));
    }

    @Test
    void quotedNamesInMessagesAreMadePrintableAndShort() {
        HeaderMutationError e = rejected(List.of(), Set.of(), List.of(write("bad\r\nname" + "x".repeat(300), "v")));
        assertFalse(e.message().contains("\r") || e.message().contains("\n"));
        assertTrue(e.message().length() < 200, e.message());
    }
}
