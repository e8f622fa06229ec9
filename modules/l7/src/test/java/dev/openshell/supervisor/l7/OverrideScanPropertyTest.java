package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import static org.junit.jupiter.api.Assertions.assertEquals;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The test that lets a JSON body skip the strict parse for {@code _method} ({@code docs/policy-reference.md}, "Method
 * override"), read on the body's bytes, decides as the same test on its decoded, lowercased text did: texts of
 * {@code method} in mixed case, its parts, backslashes before {@code u} and {@code U}, characters that lowercase to
 * other ASCII letters or to more than one character, other non-ASCII characters, and bytes that are not UTF-8. And a
 * {@code _method} member or part is never passed over, whatever JSON or multipart type, charset or header folding
 * carries it: it is found, or the body is unreadable.
 */
class OverrideScanPropertyTest {
    /** The test as it was: decode strictly, lowercase, look for {@code method} and {@code \\u}. */
    private static Optional<Boolean> reference(byte[] body) {
        Optional<String> text = Bodies.utf8(body);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        String lower = text.get().toLowerCase(Locale.ROOT);
        return Optional.of(lower.contains("method") || lower.contains("\\u"));
    }

    private static Optional<Boolean> onBytes(byte[] body) {
        if (Bodies.utf8(body).isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(OverrideForms.mayNameMethod(body));
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        List<String> pieces = List.of("method", "METHOD", "MeThOd", "metho", "ethod", "m", "e", "t", "h", "o", "d",
                "\\", "u", "U", "\\u", "\\U", "\"_method\":", "{", "}", "\u0130", "\u212a", "\u0131", "\u017f",
                "\u00e9", "\u20ac", "\ud83d\ude00", " ", "x", "\u039c\u0395\u03a4");
        Arbitrary<byte[]> text = Arbitraries.of(pieces).list().ofMaxSize(40)
                .map(l -> String.join("", l).getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> raw = Arbitraries.bytes().array(byte[].class).ofMaxSize(64);
        return Arbitraries.oneOf(text, text, raw);
    }

    @Property(tries = 2000)
    void theByteTestDecidesAsTheTextTest(@ForAll("bodies") byte[] body) {
        assertEquals(reference(body), onBytes(body));
    }

    @Provide
    Arbitrary<String> needles() {
        Arbitrary<String> method = Arbitraries.strings().withChars("mM").ofLength(1).flatMap(m ->
                Arbitraries.strings().withChars("eE").ofLength(1).flatMap(e ->
                        Arbitraries.of("thod", "THOD", "tHoD").map(rest -> m + e + rest)));
        return Arbitraries.oneOf(method, Arbitraries.of("\\u", "\\U"));
    }

    /**
     * The 8-byte words the test skips never hide a needle: {@code method} in any case, or a backslash before
     * {@code u}, at every offset from a word's start and straddling every word edge, is found; cut by its last byte
     * it is not.
     */
    @Property(tries = 1500)
    void aNeedleAtAnyOffsetIsFoundAndACutOneIsNot(@ForAll("needles") String needle,
                                                   @ForAll @IntRange(max = 40) int before,
                                                   @ForAll @IntRange(max = 40) int after) {
        String whole = "x".repeat(before) + needle + "y".repeat(after);
        String cut = "x".repeat(before) + needle.substring(0, needle.length() - 1) + "y".repeat(after);
        assertTrue(OverrideForms.mayNameMethod(whole.getBytes(StandardCharsets.US_ASCII)), whole);
        assertFalse(OverrideForms.mayNameMethod(cut.getBytes(StandardCharsets.US_ASCII)), cut);
    }

    /**
     * Over ASCII text of the needles' letters only (so pairs such as {@code ho} and near misses fall on every byte of
     * a word, on both sides of its edges), the word-at-a-time test decides as the lowercased text test.
     */
    @Property(tries = 3000)
    void nearMissesDecideAsTheTextTest(@ForAll("nearMisses") String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        assertEquals(lower.contains("method") || lower.contains("\\u"),
                OverrideForms.mayNameMethod(text.getBytes(StandardCharsets.US_ASCII)), text);
    }

    @Provide
    Arbitrary<String> nearMisses() {
        return Arbitraries.strings().withChars("mMeEtThHoOdDuU\\x").ofMaxLength(100);
    }

    /**
     * A body read in chunks ({@link TextBits#of(Body, int)}, each repeating the last bytes of the one before) gives the
     * bits of the whole array, for chunks of every size from one byte to more than the body: a needle across a chunk
     * edge is found, a NUL or non-ASCII byte in any chunk counts.
     */
    @Property(tries = 3000)
    void aBodyReadInChunksHasTheBitsOfTheWholeArray(@ForAll("chunked") byte[] body,
                                                    @ForAll @IntRange(min = 1, max = 80) int chunk) {
        assertEquals(TextBits.of(body, body.length), TextBits.of(Body.of(body), chunk));
    }

    @Provide
    Arbitrary<byte[]> chunked() {
        return Arbitraries.oneOf(bodies(), nearMisses().map(t -> t.getBytes(StandardCharsets.US_ASCII)),
                needles().flatMap(n -> Arbitraries.integers().between(0, 70).map(k -> ("x".repeat(k) + n + "y")
                        .getBytes(StandardCharsets.US_ASCII))));
    }

    @Property(tries = 500)
    void asciiIsNoByteAbove0x7f(@ForAll("bodies") byte[] body) {
        boolean expected = true;
        for (byte c : body) {
            expected &= c >= 0;
        }
        assertEquals(expected, OverrideForms.ascii(body));
    }

    @Property(tries = 500)
    void theNulTestIsAnyZeroByte(@ForAll("bodies") byte[] body, @ForAll("position") int at) {
        boolean expected = false;
        for (byte c : body) {
            expected |= c == 0;
        }
        assertEquals(expected, OverrideForms.hasNul(body));
        if (body.length > 0) {
            byte[] withNul = body.clone();
            withNul[at % body.length] = 0;
            assertEquals(true, OverrideForms.hasNul(withNul));
        }
    }

    @Provide
    Arbitrary<Integer> position() {
        return Arbitraries.integers().between(0, 1000);
    }

    @Provide
    Arbitrary<String> jsonTypes() {
        Arbitrary<String> type = Arbitraries.of("application", "text", "x", "APPLICATION");
        Arbitrary<String> subtype = Arbitraries.of("json", "x-json", "JSON", "vnd.a+json", "problem+JSON");
        Arbitrary<String> params = Arbitraries.of("", "; charset=utf-8", ";charset=\"UTF-8\"", "; charset=utf-16be",
                "; charset=utf-16", "; Charset=ISO-8859-1", "; q=1");
        return type.flatMap(t -> subtype.flatMap(st -> params.map(p -> t + "/" + st + p)));
    }

    @Provide
    Arbitrary<Charset> charsets() {
        return Arbitraries.of(StandardCharsets.UTF_8, StandardCharsets.UTF_16BE, StandardCharsets.UTF_16LE,
                StandardCharsets.UTF_16, Charset.forName("UTF-32BE"), Charset.forName("UTF-32LE"),
                Charset.forName("UTF-32"));
    }

    @Provide
    Arbitrary<String> members() {
        return Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(6).list().ofMaxSize(4)
                .map(l -> String.join("", l.stream().map(k -> "\"" + k + "\":1,").toList()));
    }

    @Property(tries = 1000)
    void aJsonMethodMemberIsNeverPassedOver(@ForAll("jsonTypes") String type, @ForAll("charsets") Charset cs,
                                            @ForAll("members") String before) {
        byte[] body = ("{" + before + "\"_method\":\"DELETE\"}").getBytes(cs);
        assertFalse(passedOver(type, body), type + " " + cs);
    }

    @Provide
    Arbitrary<String> multipartTypes() {
        return Arbitraries.of("form-data", "mixed", "related", "alternative", "x-anything", "FORM-DATA")
                .map(t -> "multipart/" + t + "; boundary=B");
    }

    @Provide
    Arbitrary<String> folds() {
        return Arbitraries.of(" ", "\r\n ", "\r\n\t", "\r\n  \t ");
    }

    @Property(tries = 500)
    void aMultipartMethodPartIsNeverPassedOver(@ForAll("multipartTypes") String type, @ForAll("folds") String a,
                                               @ForAll("folds") String b) {
        String body = "--B\r\nContent-Disposition:" + a + "form-data;" + b + "name=\"_method\"\r\n\r\nDELETE\r\n"
                + "--B--\r\n";
        assertFalse(passedOver(type, body.getBytes(StandardCharsets.ISO_8859_1)), type);
    }

    /**
     * A {@code _method} name as PHP and Rack read it: leading spaces, {@code .} or space for {@code _}, percent-escapes,
     * an array suffix, and anything after a NUL (PHP cuts the name there).
     */
    @Provide
    Arbitrary<String> formNames() {
        Arbitrary<String> lead = Arbitraries.of("", "+", "%20", "++");
        Arbitrary<String> first = Arbitraries.of("_", ".", "%5F", "%5f", "%2E", "%2e");
        Arbitrary<String> word = Arbitraries.of("method", "METHOD", "m%65thod", "Meth%6Fd");
        Arbitrary<String> tail = Arbitraries.of("", "%00", "%00x", "%00%00", "[]", "[x]", "%00[", "[%00]");
        return lead.flatMap(l -> first.flatMap(f -> word.flatMap(w -> tail.map(t -> l + f + w + t))));
    }

    @Provide
    Arbitrary<String> formTypes() {
        Arbitrary<String> base = Arbitraries.of("application/x-www-form-urlencoded",
                "Application/X-WWW-Form-Urlencoded");
        Arbitrary<String> rest = Arbitraries.of("", "; charset=utf-8", ", text/plain", ",text/plain", " text/plain",
                ";a=1, b", "\ttext/plain");
        return Arbitraries.oneOf(Arbitraries.just(""), base.flatMap(b -> rest.map(r -> b + r)));
    }

    /** A form or query {@code _method}, however its name is dressed and its pair separated, is never passed over. */
    @Property(tries = 1500)
    void aFormOrQueryMethodIsNeverPassedOver(@ForAll("formNames") String name, @ForAll("formTypes") String type,
                                             @ForAll boolean inQuery, @ForAll boolean semicolon) {
        String pairs = "a=1" + (semicolon ? ";" : "&") + name + "=DELETE";
        if (inQuery) {
            L7Request r = new L7Request("POST", "/x?" + pairs, new ArrayList<>(), Optional.empty());
            try {
                QueryReadings query = QueryReadings.of(pairs, RequestTarget.parseQuery(pairs));
                assertFalse(OverrideForms.find(r, query).isEmpty(), pairs);
            } catch (OverrideForms.Unreadable | RequestTarget.InvalidTargetException e) {
                throw new AssertionError(e);
            }
            return;
        }
        byte[] body = pairs.getBytes(StandardCharsets.ISO_8859_1);
        List<L7Request.Header> h = new ArrayList<>(List.of(new L7Request.Header("Content-Length",
                Integer.toString(body.length))));
        if (!type.isEmpty()) {
            h.add(new L7Request.Header("Content-Type", type));
        }
        assertFalse(passedOver(new L7Request("POST", "/x", h, Optional.of(Body.of(body)))), type + " " + pairs);
    }

    @Provide
    Arbitrary<String> dispositions() {
        Arbitrary<String> name = Arbitraries.of("\"_method\"", "'_method'", "_method", "\"_method\u0000x\"",
                "'.method'", "_method x", "\" _method\"");
        Arbitrary<String> param = Arbitraries.of("name=", "NAME=", "name =", "name*=UTF-8''");
        Arbitrary<String> before = Arbitraries.of("", " name=\"x\";", " name='x';", " filename=\"a\";",
                " name*=UTF-8''x;");
        Arbitrary<String> type = Arbitraries.of("form-data;", "", "FORM-DATA;", "form-data; x;", "inline;", "x;");
        return type.flatMap(t -> before.flatMap(b -> param.flatMap(p -> name.map(n -> t + b + " "
                + (p.endsWith("''") ? p + n.replace("\"", "").replace("'", "") : p + n)))));
    }

    /** A multipart part named {@code _method} by its first, last or only name, quoted either way, is found. */
    @Property(tries = 700)
    void aMultipartNameIsReadAsPhpReadsIt(@ForAll("dispositions") String disposition) {
        String body = "--B\r\nContent-Disposition: " + disposition + "\r\n\r\nDELETE\r\n--B--\r\n";
        assertFalse(passedOver("multipart/form-data; boundary=B", body.getBytes(StandardCharsets.ISO_8859_1)),
                disposition);
    }

    /** The {@code boundary} parameter of a multipart type, spelt as clients may spell it. */
    private static final List<String> BOUNDARY = List.of("boundary=bnd", "boundary=\"bnd\"", "BOUNDARY=bnd",
            "Boundary = bnd");

    /**
     * A second boundary reading some parser takes (PHP: the first {@code boundary} substring; Rack: the last
     * {@code boundary=}; Commons FileUpload: the last {@code boundary} or {@code boundary*} parameter).
     */
    @Provide
    Arbitrary<String> decoys() {
        return Arbitraries.of("xboundary=evil", "x-boundary=evil", "charset=\"boundary=evil\"", "boundary*=utf-8''evil",
                "BOUNDARY*=UTF-8''%65vil", "boundary=evil", "x=\"a;boundary=evil\"", "xBoundary=\"evil\"",
                "boundary*=evil");
    }

    @Provide
    Arbitrary<String> separators() {
        return Arbitraries.of("; ", ";", " ;\t", "; x=1; ");
    }

    /**
     * A {@code _method} part under a boundary that a second boundary reading of the {@code Content-Type} takes, before
     * or after the {@code boundary} parameter, is never passed over.
     */
    @Property(tries = 1000)
    void aPartUnderAnyBoundaryReadingIsNeverPassedOver(@ForAll("decoys") String decoy,
                                                        @ForAll("separators") String sep, @ForAll boolean decoyFirst,
                                                        @ForAll @IntRange(min = 0, max = 3) int spelling) {
        String real = BOUNDARY.get(spelling);
        String type = "multipart/form-data" + sep + (decoyFirst ? decoy + sep + real : real + sep + decoy);
        String body = "--evil\r\nContent-Disposition: form-data; name=\"_method\"\r\n\r\nDELETE\r\n--evil--\r\n"
                + "--bnd\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--bnd--\r\n";
        assertFalse(passedOver(type, body.getBytes(StandardCharsets.ISO_8859_1)), type);
    }

    /** A multipart type with one boundary reading, however spelt and whatever other parameters it has, goes on. */
    @Property(tries = 300)
    void aSingleBoundaryReadingGoesOn(@ForAll("separators") String sep, @ForAll @IntRange(min = 0, max = 3) int spelling,
                                      @ForAll boolean charsetFirst) {
        String real = BOUNDARY.get(spelling);
        String type = "multipart/form-data" + sep + (charsetFirst ? "charset=utf-8" + sep + real
                : real + sep + "charset=\"utf-8\"");
        String body = "--bnd\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--bnd--\r\n";
        assertTrue(passedOver(type, body.getBytes(StandardCharsets.ISO_8859_1)), type);
    }

    /** A {@code Content-Type} holding {@code /json} or {@code +json} anywhere, as Laravel's {@code isJson()} reads it. */
    @Provide
    Arbitrary<String> laravelJsonTypes() {
        Arbitrary<String> base = Arbitraries.of("text/plain", "application/octet-stream", "x/y", "TEXT/HTML",
                "application/x-www-form-urlencoded");
        Arbitrary<String> token = Arbitraries.of("/json", "+json", "/JSON", "+Json");
        Arbitrary<String> where = Arbitraries.of("%s%s", "%s%sx", "%s; x=a%s", "%s, application%s", "%s; x=\"a%s\"",
                "%s;a=1, b%s");
        return base.flatMap(b -> token.flatMap(t -> where.map(w -> String.format(w, b, t))));
    }

    @Property(tries = 500)
    void aJsonMethodUnderAnyTypeNamingJsonIsNeverPassedOver(@ForAll("laravelJsonTypes") String type,
                                                            @ForAll("members") String before) {
        byte[] body = ("{" + before + "\"_method\":\"DELETE\"}").getBytes(StandardCharsets.UTF_8);
        assertFalse(passedOver(type, body), type);
    }

    /** {@return whether a POST with this body goes on with no override found and no refusal} */
    private static boolean passedOver(String contentType, byte[] body) {
        return passedOver(new L7Request("POST", "/x", new ArrayList<>(List.of(new L7Request.Header("Content-Type",
                contentType), new L7Request.Header("Content-Length", Integer.toString(body.length)))),
                Optional.of(Body.of(body))));
    }

    private static boolean passedOver(L7Request r) {
        try {
            return OverrideForms.find(r, QueryReadings.NONE).isEmpty();
        } catch (OverrideForms.Unreadable e) {
            return false;
        }
    }
}
