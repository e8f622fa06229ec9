package dev.openshell.middleware.spi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link BodyCharsets}: a {@code <meta>} declaration anywhere, an XML declaration at the start, in any case, quoting
 * and spacing, is read with its name as written; read as the bytes arrive, however they are split, the declarations
 * are those of the whole body.
 */
class BodyCharsetsPropertyTest {
    enum Shape { META, META_SPACED, EQUIV, XML, XML_PI_SPACED }

    @Provide
    Arbitrary<String> names() {
        return Arbitraries.of("utf-7", "UTF-7", "UTF7", "u7", "unicode-1-1-utf-7", "utf_7", "Unicode_Escape",
                "iso-2022-jp", "csUnicode11UTF7", "UTF-8", "windows-1252", "ebcdic-cp-us", "x-user-defined");
    }

    @Provide
    Arbitrary<String> fillers() {
        return Arbitraries.strings().withChars("abc xyz<>/!-=\"'\n\tp").ofMaxLength(1200);
    }

    /** {@return {@code name} as Python's {@code encodings.normalize_encoding} reads it, lower-cased, with '-'} */
    static String lookup(String name) {
        return String.join("-", java.util.Arrays.stream(name.split("[^A-Za-z0-9.]+")).filter(p -> !p.isEmpty())
                .toList()).toLowerCase(java.util.Locale.ROOT);
    }

    /** {@code s} with each letter in a random case. */
    private static String cased(String s, long seed) {
        StringBuilder b = new StringBuilder();
        java.util.Random r = new java.util.Random(seed);
        for (char c : s.toCharArray()) {
            b.append(r.nextBoolean() ? Character.toUpperCase(c) : c);
        }
        return b.toString();
    }

    private static String declaration(Shape shape, String name, String quote, String ws, long seed) {
        return switch (shape) {
            case META -> "<" + cased("meta", seed) + " " + cased("charset", seed) + ws + "=" + ws + quote + name
                    + quote + ">";
            case META_SPACED -> "<" + ws + "META name=x " + cased("charset", seed) + "=" + quote + name + quote
                    + " />";
            case EQUIV -> "<meta http-equiv=\"Content-Type\" content=\"text/html;" + ws + cased("charset", seed)
                    + ws + "=" + ws + name + "\">";
            case XML, XML_PI_SPACED -> "<?xml version=\"1.0\" " + cased("encoding", seed) + ws + "=" + ws
                    + (quote.isEmpty() ? "'" : quote) + name + (quote.isEmpty() ? "'" : quote) + "?>";
        };
    }

    @Property(tries = 600)
    void aDeclarationIsReadWhereverItStands(@ForAll("names") String name, @ForAll Shape shape,
            @ForAll @IntRange(min = 0, max = 70_000) int at, @ForAll long seed) {
        String quote = List.of("", "\"", "'").get((int) Math.floorMod(seed, 3L));
        String ws = List.of("", " ", "\t", "\n ").get((int) Math.floorMod(seed >> 3, 4L));
        String decl = declaration(shape, name, quote, ws, seed);
        String pad = shape == Shape.XML ? "" : shape == Shape.XML_PI_SPACED ? " \r\n\t" : "x".repeat(at);
        byte[] body = (pad + decl + "<p>tail</p>").getBytes(StandardCharsets.US_ASCII);
        List<BodyCharsets.Declaration> found = BodyCharsets.declared(body, body.length);
        assertTrue(found.stream().anyMatch(d -> d.name().equals(lookup(name))),
                () -> shape + " at " + at + " -> " + found);
    }

    /** Attacker pass 10, P12-1: the tag that declared UTF-7 after 1,000 bytes of comment. */
    @Example
    void aMetaAfterAThousandBytesOfCommentIsRead() {
        byte[] body = ("<html><head><!--" + "a".repeat(1000) + "--><meta charset=\"utf-7\"></head><body>X+AGs-")
                .getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of(new BodyCharsets.Declaration("utf-7", BodyCharsets.Source.META)),
                BodyCharsets.declared(body, body.length));
    }

    /** An XML declaration counts anywhere (w3lib and node-fetch do not anchor it), and past the first 1024 bytes. */
    @Example
    void anXmlDeclarationCountsAnywhere() {
        byte[] late = ("<a/>" + "<?xml version='1.0' encoding='utf-7'?>").getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of("utf-7"), names(late));
        byte[] past = ("<?xml version='1.0'" + " ".repeat(BodyCharsets.WINDOW) + "encoding='utf-7'?>")
                .getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of("utf-7"), names(past));
    }

    private static List<String> names(byte[] b) {
        return BodyCharsets.declared(b, b.length).stream().map(BodyCharsets.Declaration::name).distinct().toList();
    }

    /**
     * An XML declaration at the start is read once, by the reader of every tag: its names are {@link
     * BodyCharsets.Source#XML} (after a UTF-8 byte order mark and white space; any processing instruction), not also
     * {@link BodyCharsets.Source#META}; BeautifulSoup's {@code encoding=['"](.*?)['"]} runs to either quote.
     */
    @Example
    void anXmlDeclarationAtTheStartIsReadOnce() {
        for (String doc : List.of("<?xml version='1.0' encoding='utf-7'?>", "\ufeff \n<?xml version=\"1.0\" encoding=\"UTF-7\"?>",
                "<?php $encoding='utf-7' ?>", "<?xml version=\"1.0\" encoding=\"utf 7'?>")) {
            byte[] b = doc.getBytes(StandardCharsets.UTF_8);
            assertEquals(List.of(new BodyCharsets.Declaration("utf-7", BodyCharsets.Source.XML)),
                    BodyCharsets.declared(b, b.length).stream().filter(d -> d.name().equals("utf-7")).toList(), doc);
        }
        for (String doc : List.of("<meta name=a><meta charset=\"&#117;tf-7\">", "<?php ?>\n<meta charset=\"&#117;tf-7\">",
                "<?xml version='1.0'?><meta charset='&#117;tf-7'>")) {
            byte[] b = doc.getBytes(StandardCharsets.US_ASCII); // a tag on another tag's line is read as a tag too
            assertTrue(names(b).contains("utf-7"), doc + " -> " + names(b));
        }
        byte[] cut = "\u00ef\u00bb<?xml version='1.0' encoding='utf-7'?>".getBytes(StandardCharsets.ISO_8859_1);
        assertEquals(List.of(new BodyCharsets.Declaration("utf-7", BodyCharsets.Source.META)),
                BodyCharsets.declared(cut, cut.length), "a byte order mark cut short: not the start");
    }

    /** BeautifulSoup's {@code ^\\s*<\\?.*encoding=} reads past a CR (Python's {@code .} matches it) up to the LF. */
    @Example
    void anXmlDeclarationsLineEndsAtItsLf() {
        byte[] b = "<?xml version='1.0'?>\r<a>encoding='utf-7'</a>\n".getBytes(StandardCharsets.US_ASCII);
        assertTrue(BodyCharsets.declared(b, b.length).contains(new BodyCharsets.Declaration("utf-7",
                BodyCharsets.Source.XML)));
    }

    @Example
    void aLongNameIsKeptToItsFirstBytesAndResolvesNowhere() {
        byte[] body = ("<meta charset=" + "x".repeat(CharsetName.MAX + 40) + ">").getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of(), BodyCharsets.declared(body, body.length));
        byte[] padded = ("<meta charset=\"" + "\t".repeat(500) + "utf-7\">").getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of(new BodyCharsets.Declaration("utf-7", BodyCharsets.Source.META)),
                BodyCharsets.declared(padded, padded.length), "padding is no part of the name as looked up");
    }

    /**
     * Attacker pass 11, P13-5: a name no reader resolves (a template's or a code sample's) declares nothing; any name
     * Python's codecs, iconv, the WHATWG labels or the JDK know does, however it is spelled.
     */
    @Example
    void onlyANameSomeReaderResolvesIsADeclaration() {
        for (String name : List.of("%s", "{enc}", "${charset}", "%(encoding)s", "(.+", "[", "\\\\", "' + enc + '",
                "x-nobody", "{{ charset }}")) {
            byte[] b = ("<meta charset=" + name + "><?xml encoding='" + name + "'?>").getBytes(StandardCharsets.UTF_8);
            assertEquals(List.of(), BodyCharsets.declared(b, b.length), name);
        }
        for (String name : List.of("utf-7", "U.T.F-7", "utf--7", "UTF_7", "u7", "csUnicode11UTF7", "UTF7-IMAP",
                "IBM500", "ebcdic-cp-us", "hz-gb-2312", "unicode_escape", "x-mac-roman", "ISO_8859-1:1987")) {
            byte[] b = ("<meta charset=\"" + name + "\">").getBytes(StandardCharsets.US_ASCII);
            assertFalse(BodyCharsets.declared(b, b.length).isEmpty(), name);
        }
    }

    /**
     * P14-6 reviewed: {@code %(e)s} (CPython 3.6's {@code Lib/test/test_calendar.py} writes a {@code <meta>} and an XML
     * declaration with it) is a name a reader resolves, not a false refusal: libxml2 (lxml, PHP's DOM, xmllint) hands
     * the value to {@code iconv_open} as written, and glibc's {@code iconv_open} (2.32 and later) drops every byte
     * but letters, digits and {@code _-.,:/} before its lookup, so {@code %(e)s} and {@code "{e}s"} are {@code ES},
     * ISO646-ES ({@code [} is {@code ¡}; {@code iconv -f '%(e)s'} on glibc 2.36). So they stay declarations.
     */
    @Example
    void aNameGlibcReadsWithoutItsPunctuationIsADeclaration() {
        for (String name : List.of("%(e)s", "{e}s", "ES", "iso646-es", "utf-7", "UTF7", "unicode-1-1-utf-7",
                "csUnicode11UTF7")) {
            byte[] meta = ("<p><meta http-equiv=\"Content-Type\" content=\"text/html; charset=" + name + "\" />")
                    .getBytes(StandardCharsets.US_ASCII);
            assertFalse(BodyCharsets.declared(meta, meta.length).isEmpty(), name);
            byte[] xml = ("<?xml version=\"1.0\" encoding=\"" + name + "\"?>").getBytes(StandardCharsets.US_ASCII);
            assertTrue(BodyCharsets.declared(xml, xml.length).stream()
                    .anyMatch(d -> d.source() == BodyCharsets.Source.XML), name);
        }
    }

    /**
     * GNU libiconv's names are declarations (attacker pass 15, P17-1): lxml's wheels from PyPI link libiconv, whose
     * {@code JAVA} and {@code C99} decode backslash-u escapes, and whose other names glibc's iconv lacks.
     */
    @Example
    void aNameOnlyLibiconvResolvesIsADeclaration() {
        for (String name : List.of("JAVA", "java", "C99", "UCS-2-INTERNAL", "UCS-4-SWAPPED", "MacCentralEurope",
                "Georgian-Academy", "MULELAO-1", "TDS565", "BIG5-HKSCS:2008", "CP1131")) {
            byte[] meta = ("<html><meta charset=\"" + name + "\">\\\\u0067").getBytes(StandardCharsets.US_ASCII);
            assertFalse(BodyCharsets.declared(meta, meta.length).isEmpty(), name);
        }
    }

    /**
     * ICU's names and its comparison are declarations too (attacker pass 15b, P17b-1, P17b-2): libxml2 falls back to
     * ICU for a name iconv cannot open (as Debian builds it), and ICU drops a number's leading zeros and looks a name
     * up again without an {@code x-} prefix, so {@code x-utf-7} and {@code utf-07} are UTF-7 there; SCSU and its IBM
     * names are only ICU's.
     */
    @Example
    void aNameIcuResolvesIsADeclaration() {
        for (String name : List.of("x-utf-7", "utf-07", "UTF-0007", "x-utf-007", "x-windows-65000", "windows-065000",
                "unicode-1-1-utf-07", "unicode-01-01-utf-07", "SCSU", "scsu", "x-scsu", "ibm-1212", "ibm-1213",
                "BOCU-1", "ibm-37_P100-1995")) {
            byte[] meta = ("<html><meta charset=\"" + name + "\">").getBytes(StandardCharsets.US_ASCII);
            assertFalse(BodyCharsets.declared(meta, meta.length).isEmpty(), name);
        }
    }

    /** ICU's comparison of names: letters lower-cased and digits only, a number's leading zeros dropped. */
    @Example
    void icuComparesNamesWithoutLeadingZeros() {
        assertEquals("utf7", KnownCharsets.icuKey("UTF-0007"));
        assertEquals("unicode11utf7", KnownCharsets.icuKey("unicode-01-01-utf-07"));
        assertEquals("windows65000", KnownCharsets.icuKey("windows-065000"));
        assertEquals("ibm1047", KnownCharsets.icuKey("ibm-1047"));
        assertEquals("iso885910", KnownCharsets.icuKey("ISO_8859-10"));
        assertEquals("cp0", KnownCharsets.icuKey("cp0"));
        assertFalse(KnownCharsets.resolves("%s"), "a template's name still declares nothing");
        assertFalse(KnownCharsets.resolves("x-enc"), "nor an unknown x- name");
    }

    /**
     * A reference in a tag is also read as written: BeautifulSoup's {@code <\\s*meta[^>]+charset\\s*=} and node-fetch's
     * {@code <meta.+?charset=(['"])(.+?)\\1} read the raw bytes, so {@code utf&#7;} is {@code utf_7} to Python's codec
     * lookup and {@code utf7} to iconv-lite (UTF-7), though an HTML parser reads {@code utf} and U+0007 (UTF-8); and
     * {@code &#xcharset=} is {@code charset=} to BeautifulSoup, U+000C and {@code harset=} to an HTML parser.
     */
    @Example
    void aReferenceInATagIsAlsoReadAsWritten() {
        for (String doc : List.of("<meta charset=\"utf&#7;\">", "<meta charset=utf&#7;>", "<meta charset='utf&#7'>",
                "<meta http-equiv=a content=\"text/html; charset=utf&#7;\">", "<?xml version='1.0' encoding='utf&#7;'?>",
                "<p><?xml version='1.0' encoding='utf&#7;'?>", "<meta name=x &#xcharset=utf-7>")) {
            byte[] b = doc.getBytes(StandardCharsets.US_ASCII);
            List<String> found = names(b);
            assertTrue(found.stream().anyMatch(n -> n.replace("-", "").equals("utf7")), doc + " -> " + found);
        }
    }

    @Example
    void aNameAtTheEndOfTheBodyEndsWithIt() {
        byte[] body = "<p><meta charset=utf-7".getBytes(StandardCharsets.US_ASCII);
        BodyCharsets.Reader reader = BodyCharsets.reader();
        assertEquals(List.of(), reader.read(body, 0, body.length), "the name may go on");
        assertEquals(List.of(new BodyCharsets.Declaration("utf-7", BodyCharsets.Source.META)), reader.end());
    }

    @Provide
    Arbitrary<String> documents() {
        Arbitrary<String> piece = Arbitraries.oneOf(
                Arbitraries.strings().withChars("abc xyz<>/!-=\"'\n\tpmeta;?").ofMaxLength(40),
                Arbitraries.of("<meta charset=utf-7>", "< META\tCharSet = 'x-y' />", "&#x63;", "&#0099", "&amp;",
                        "&equals;", "ch&#97;rset", "<?xml encoding=\"ebcdic\"?>\n",
                        "<meta http-equiv=a content=\"text/html; charset=utf-7\">", "<meta a='>' charset=u7>",
                        "charset=", "<meta", "+/v8", "\ufeff"));
        return piece.list().ofMaxSize(30).map(l -> String.join("", l));
    }

    @Property(tries = 400)
    void readAsItArrivesTheDeclarationsAreTheWholeBodys(@ForAll("documents") String doc,
            @ForAll("cuts") List<Integer> cuts) {
        byte[] body = doc.getBytes(StandardCharsets.UTF_8);
        BodyCharsets.Reader reader = BodyCharsets.reader();
        List<BodyCharsets.Declaration> streamed = new java.util.ArrayList<>();
        int at = 0;
        for (int cut : cuts) {
            int n = Math.min(cut, body.length - at);
            streamed.addAll(reader.read(body, at, n));
            at += n;
        }
        streamed.addAll(reader.read(body, at, body.length - at));
        streamed.addAll(reader.end());
        List<BodyCharsets.Declaration> whole = BodyCharsets.declared(body, body.length);
        assertEquals(sorted(whole), sorted(streamed), doc);
    }

    @Provide
    Arbitrary<List<Integer>> cuts() {
        return Arbitraries.integers().between(0, 12).list().ofMaxSize(40);
    }

    private static List<String> sorted(List<BodyCharsets.Declaration> ds) {
        return ds.stream().map(d -> d.source() + ":" + d.name()).sorted().toList();
    }

    @Property(tries = 300)
    void anyInputIsReadWithoutThrowing(@ForAll("fillers") String text) {
        byte[] b = text.getBytes(StandardCharsets.ISO_8859_1);
        BodyCharsets.declared(b, b.length).forEach(d -> assertTrue(!d.name().isBlank()));
    }

    @Example
    void signatures() {
        for (String sig : List.of("+/v8", "+/v9", "+/v+", "+/v/", "+/v8-")) {
            byte[] b = (sig + "abc").getBytes(StandardCharsets.US_ASCII);
            assertEquals(List.of(new BodyCharsets.Declaration("UTF-7", BodyCharsets.Source.SIGNATURE)),
                    BodyCharsets.declared(b, b.length), sig);
        }
        byte[] bom = {(byte) 0xff, (byte) 0xfe, 'a', 0};
        assertEquals("UTF-16LE", BodyCharsets.declared(bom, 4).get(0).name());
        assertEquals(List.of(), BodyCharsets.declared(" +/v8".getBytes(StandardCharsets.US_ASCII), 5));
    }

    /**
     * A character reference in a tag is read as the character it stands for, as an HTML parser reads an attribute
     * value (libxml2 takes the charset of an {@code http-equiv} content so); one that stands for no ASCII character,
     * and a bare {@code &}, are read as written.
     */
    @Example
    void aCharacterReferenceInATagIsReadAsItsCharacter() {
        for (String tag : List.of("<meta http-equiv=Content-Type content=\"text/html; ch&#97;rset=utf-7\">",
                "<meta http-equiv=Content-Type content=\"text/html; &#x63;harset=utf-7\">",
                "<meta http-equiv=Content-Type content=\"text/html; &#0000000000000000000000000000000000000099;harset"
                        + "=utf-7\">",
                "<meta http-equiv=Content-Type content=\"text/html; charset&#61;utf-7\">",
                "<meta http-equiv=Content-Type content=\"text/html; charset&equals;utf-7&semi;\">",
                "<meta charset=\"&#117;tf-7\">", "<meta charset=&#x75&#x74&#x66-7>",
                "<\u000bmeta\u000bcharset\u000b=\u000butf-7>")) {
            byte[] b = ("<p>" + tag).getBytes(StandardCharsets.US_ASCII);
            assertEquals(List.of(new BodyCharsets.Declaration("utf-7", BodyCharsets.Source.META)),
                    BodyCharsets.declared(b, b.length), tag);
            for (int cut = 1; cut < b.length; cut++) { // however the bytes are split
                BodyCharsets.Reader r = BodyCharsets.reader();
                List<BodyCharsets.Declaration> found = new java.util.ArrayList<>(r.read(b, 0, cut));
                found.addAll(r.read(b, cut, b.length - cut));
                found.addAll(r.end());
                assertEquals(List.of("utf-7"), found.stream().map(BodyCharsets.Declaration::name).toList(), tag);
            }
        }
        byte[] plain = "<meta name=description content=\"Tom &amp; Jerry &#8212; &c. charsets\">"
                .getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of(), BodyCharsets.declared(plain, plain.length));
        byte[] kept = "<meta charset=\"utf&#8208;7\">".getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of("utf"), names(kept),
                "not ASCII: read as its bytes; w3lib's word reading stops at '&' (Python reads utf as UTF-8)");
    }

    /**
     * Attacker pass 11, P13-1: a name BeautifulSoup reads past a TAB, LF or {@code ?} right after the quote or
     * {@code =} (Python's codec lookup then drops them), and an XML name with white space inside its quotes.
     */
    @Example
    void namesAreReadAsBeautifulSoupAndTheCodecLookupReadThem() {
        for (String tag : List.of("<meta charset=\"\tutf-7\">", "<meta charset=\"\nutf-7\">", "<meta charset=\"?utf-7\">",
                "<meta charset=?utf-7\">", "<meta http-equiv=a content=\"text/html; charset=?utf-7\">",
                "<meta charset=\"\u000cUTF_7\">", "<?xml version='1.0' encoding=\" utf-7\"?>",
                "<?xml version='1.0' encoding='\tutf-7'?>", "<?xml version='1.0' encoding=\";utf-7\"?>")) {
            byte[] b = tag.getBytes(StandardCharsets.US_ASCII);
            List<BodyCharsets.Declaration> found = BodyCharsets.declared(b, b.length);
            assertTrue(found.stream().anyMatch(d -> d.name().equals("utf-7")), tag + " -> " + found);
        }
        byte[] two = "<meta charset=utf-8\tname=x>".getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of("utf-8"), BodyCharsets.declared(two, two.length).stream()
                .map(BodyCharsets.Declaration::name).toList(), "both readings, the whole one resolving nowhere");
    }

    /**
     * Attacker pass 12 (P14-1 to P14-3): the ways other readers take a name (requests and readability up to a quote,
     * node-fetch and iconv-lite, w3lib's word, jsoup's quotes dropped), an XML declaration anywhere, and a
     * {@code charset=} on a {@code <meta>}'s line after its {@code >}.
     */
    @Example
    void otherReadersNamesAreReadToo() {
        for (String doc : List.of("<meta charset=\" utf-7\">", "<meta charset=\" utf7\">", "<meta charset=\"u t f 7\">",
                "<meta charset=\"u'tf-7\">", "<meta charset=\"UTF7:1999\">", "<meta charset=utf-7:2024>",
                "<meta charset=utf-7.1>", "<meta charset=utf-7+x>",
                "<meta http-equiv=Content-Type content=\"text/html; charset=utf-7:1\">",
                "<!-- c --><head><?xml version=\"1.0\" encoding=\"utf-7\"?>",
                "<meta name=viewport content=x><div data-charset=\"utf-7\">",
                "<meta name=a><title>charset=utf-7></title>")) {
            byte[] b = doc.getBytes(StandardCharsets.US_ASCII);
            List<BodyCharsets.Declaration> found = BodyCharsets.declared(b, b.length);
            assertTrue(found.stream().anyMatch(d -> lookup(d.name()).replace("-", "").equals("utf7")),
                    doc + " -> " + found);
        }
        for (String js : List.of("<meta charset=\"un\u0131code-1-1-utf-7\">", "<meta charset=\"UN\u0130CODE-1-1-UTF-7\">",
                "<meta charset=\"c\u017fUnicode11UTF7\">")) {
            byte[] b = js.getBytes(StandardCharsets.UTF_8); // node-fetch maps case as JavaScript does
            List<String> found = names(b);
            assertTrue(found.contains("unicode11utf7") || found.contains("csunicode11utf7"), js + " -> " + found);
        }
        byte[] jsoup = "<meta charset=\"IB'M290\">".getBytes(StandardCharsets.US_ASCII);
        assertTrue(BodyCharsets.declared(jsoup, jsoup.length).stream()
                .anyMatch(d -> d.name().replace("-", "").equals("ibm290")), "jsoup drops quotes");
        byte[] nextLine = ("<meta name=a>" + "x".repeat(4100) + "\n<p>charset=utf-7</p>")
                .getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of(), BodyCharsets.declared(nextLine, nextLine.length), "past 4096 bytes, a line ends at LF");
        for (String page : List.of("<meta charset=\"utf-8\">", "<meta charset=\"utf-8\" /><script>var charset = "
                + "document.characterSet;</script>", "<meta http-equiv=\"Content-Type\" content=\"text/html; "
                + "charset=iso-8859-1\">")) {
            byte[] b = page.getBytes(StandardCharsets.US_ASCII);
            assertTrue(BodyCharsets.declared(b, b.length).stream().allMatch(d -> d.name().equals("utf-8")
                    || d.name().equals("iso-8859-1")), page + " -> " + BodyCharsets.declared(b, b.length));
        }
    }

    /** Attacker pass 12, P14-4: every {@code charset=} in a {@code Content-Type}, as w3lib and node-fetch take one. */
    @Example
    void everyCharsetInAContentTypeIsRead() {
        assertEquals(List.of("utf-7"), BodyCharsets.namesInHeader("text/html; x-charset=utf-7"));
        assertTrue(BodyCharsets.namesInHeader("text/html; xcharset=utf-7; charset=utf-8").contains("utf-7"));
        assertTrue(BodyCharsets.namesInHeader("text/html; a=\"charset=utf-7\"; charset=utf-8").contains("utf-7"));
        assertEquals(List.of("utf-8"), BodyCharsets.namesInHeader("text/html; charset=\"UTF-8\""));
        assertEquals(List.of(), BodyCharsets.namesInHeader("text/plain; format=flowed"));
    }

    /**
     * Attacker pass 13: node-fetch trims before dropping {@code :dddd} (P15-3); readability takes every quote before a
     * value (P15-4); w3lib's {@code content=[^;]+;\s*charset=} runs across lines in the first 4096 bytes (P15-7);
     * requests matches {@code charset} with Python's case folding ({@code charſet}, P15-8).
     */
    @Example
    void passThirteensSpellingsAreRead() {
        for (String doc : List.of("<meta charset=\"u:tf-7:1999 \">", "<meta charset=\"u:tf-7:1999\u00a0\">",
                "<meta charset=\"\"utf-7\">", "<meta charset=''utf-7'>", "<meta charset=\"'\"utf-7\">",
                "<meta http-equiv=a content=\"text/html; charset=\"\"utf-7\">", "<?xml version='1.0' encoding=\"\"utf-7\"?>",
                "<meta http-equiv=\"Content-Type\" content=\"text/html\">\n<p>a\n;charset=utf-7</p>",
                "<meta char\u017fet=\"utf-7\">")) {
            byte[] b = doc.getBytes(StandardCharsets.UTF_8);
            List<String> found = names(b);
            assertTrue(found.stream().anyMatch(n -> n.replace("-", "").equals("utf7")), doc + " -> " + found);
        }
        assertTrue(BodyCharsets.namesInHeader("text/html; \"charset\"=utf-7").contains("utf-7"));
        assertTrue(BodyCharsets.namesInHeader("text/html; ' charset'='utf-7'").contains("utf-7"));
        String longS = new String("text/plain; char\u017fet=utf-7".getBytes(StandardCharsets.UTF_8),
                StandardCharsets.ISO_8859_1); // the field's bytes as the proxy holds them (P16-1)
        assertTrue(BodyCharsets.namesInHeader(longS).contains("utf-7"), longS);
    }

    @Provide
    Arbitrary<byte[]> starts() {
        Arbitrary<byte[]> piece = Arbitraries.of("+/v8", "+/v9", "+/v+", "+/v/", "+/v", "+/", "+", "\ufeff", "<", "a",
                "-").map(t -> t.getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> marks = Arbitraries.of(new byte[] {(byte) 0xfe, (byte) 0xff}, new byte[] {(byte) 0xff,
            (byte) 0xfe}, new byte[] {0, 0}, new byte[] {(byte) 0xfe, (byte) 0xff, 0, 0}, new byte[] {(byte) 0xef},
            new byte[] {(byte) 0xbb, (byte) 0xbf});
        return Arbitraries.oneOf(piece, marks).list().ofMaxSize(4).map(list -> {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            list.forEach(out::writeBytes);
            return out.toByteArray();
        });
    }

    /** The signature alone is what the whole reading finds in the first four bytes. */
    @Property(tries = 1000)
    void theSignatureAloneIsWhatTheWholeReadingFindsInTheFirstFourBytes(@ForAll("starts") byte[] b) {
        java.nio.ByteBuffer all = java.nio.ByteBuffer.wrap(b);
        assertEquals(BodyCharsets.declared(all.slice(0, Math.min(4, b.length))), BodyCharsets.signatureOf(all));
    }
}
