package dev.openshell.middleware.spi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The readings of header parameters, with the examples of RFC 2231, RFC 2047 and RFC 8187. */
class HeaderParametersTest {
    private static List<String> read(String value, String name) {
        return HeaderParameters.readings(value, false).byName().getOrDefault(name, List.of());
    }

    private static String words(String s) {
        return EncodedWords.decode(s).text();
    }

    private static boolean unreadable(String value, String name) {
        return HeaderParameters.readings(value, false).unreadable().contains(name);
    }

    private static void has(String value, String name, String expected) {
        List<String> r = read(value, name);
        assertTrue(r.contains(expected), () -> name + " of " + value + " reads " + r + ", not " + expected);
    }

    /**
     * Section numbers of any length are joined in integer order, as Python's {@code email} ({@code int()}) and
     * Werkzeug read them (attacker pass 7: {@code *10000}, {@code *00001}, 2^63 and 10^20 were left unjoined).
     */
    @Test
    void sectionNumbersOfAnyLengthJoinInIntegerOrder() {
        has("attachment; filename*0=\"sk-\"; filename*10000=\"def\"; filename*9999=\"abc\"", "filename",
                "sk-abcdef");
        has("form-data; name*0=\"_me\"; name*00001=\"thod\"", "name", "_method");
        has("attachment; filename*0=\"a\"; filename*100000000000000000000=\"c\";"
                + " filename*9223372036854775808=\"b\"", "filename", "abc");
        has("attachment; filename*0*=UTF-8''%73%6B-; filename*2147483648*=%61%62", "filename", "sk-ab");
    }

    /**
     * An unnumbered extended parameter joins numbered ones as section 0, as Python's {@code email} default policy
     * reads it (attacker pass 7, P9-5); a plain part whose number is not the next one is skipped there.
     */
    @Test
    void unnumberedPartIsSectionZeroAsPythonEmailReadsIt() {
        has("attachment; filename*=UTF-8''%73%6B-abc; filename*1=\"def\"", "filename", "sk-abcdef");
        has("attachment; filename*=UTF-16LE''%73%00%6B%00%2D%00; filename*1=\"abc\"", "filename", "sk-abc");
        has("attachment; filename*=UTF-8''%73%6B-; filename*0=\"x\"; filename*1=\"abc\"", "filename", "sk-abc");
        has("form-data; name*1=\"thod\"; name=\"_me\"", "name", "_method");
        // another name's numbering does not shift this name's: its *1 is still the part after its unnumbered one
        has("attachment; a*0=\"x\"; filename*=UTF-16LE''%73%00%6B%00%2D%00; filename*1=\"abc\"", "filename",
                "sk-abc");
    }

    @Test
    void rfc2231Section3Continuations() {
        has("message/external-body; access-type=URL; URL*0=\"ftp://\";"
                + " URL*1=\"cs.utk.edu/pub/moore/bulk-mailer/bulk-mailer.tar\"", "url",
                "ftp://cs.utk.edu/pub/moore/bulk-mailer/bulk-mailer.tar");
    }

    @Test
    void rfc2231Section4ExtendedValue() {
        has("application/x-stuff; title*=us-ascii'en-us'This%20is%20%2A%2A%2Afun%2A%2A%2A", "title",
                "This is ***fun***");
    }

    @Test
    void rfc2231Section41Mixed() {
        has("application/x-stuff; title*0*=us-ascii'en'This%20is%20even%20more%20;"
                + " title*1*=%2A%2A%2Afun%2A%2A%2A%20; title*2=\"isn't it!\"", "title",
                "This is even more ***fun*** isn't it!");
    }

    @Test
    void rfc8187Section322Examples() {
        has("attachment; title*=iso-8859-1'en'%A3%20rates", "title", "\u00a3 rates");
        has("attachment; title*=UTF-8''%c2%a3%20and%20%e2%82%ac%20rates", "title", "\u00a3 and \u20ac rates");
    }

    @Test
    void rfc2047Section8Examples() {
        assertEquals("Keith Moore", words("=?US-ASCII?Q?Keith_Moore?="));
        assertEquals("Andr\u00e9 Pirard", words("=?ISO-8859-1?Q?Andr=E9?= Pirard"));
        assertEquals("If you can read this you understand the example.", words(
                "=?ISO-8859-1?B?SWYgeW91IGNhbiByZWFkIHRoaXMgeW8=?= "
                + "=?ISO-8859-2?B?dSB1bmRlcnN0YW5kIHRoZSBleGFtcGxlLg==?="));
        assertEquals("(a)", words("(=?ISO-8859-1?Q?a?=)"));
        assertEquals("(a b)", words("(=?ISO-8859-1?Q?a?= b)"));
        assertEquals("(ab)", words("(=?ISO-8859-1?Q?a?= =?ISO-8859-1?Q?b?=)"));
        assertEquals("(ab)", words("(=?ISO-8859-1?Q?a?=\r\n    =?ISO-8859-1?Q?b?=)"));
        assertEquals("(a b)", words("(=?ISO-8859-1?Q?a_b?=)"));
        assertEquals("(a b)", words("(=?ISO-8859-1?Q?a?= =?ISO-8859-2?Q?_b?=)"));
        has("form-data; name=\"=?utf-8?B?X21ldGhvZA==?=\"", "name", "_method");
    }

    @Test
    void attackerPass8Forms() {
        String k = "k9Q7zR2mW4xT8vN1pL6sJ3hF5dG0bCq";
        has("attachment; filename*=UTF-16LE''" + pct(k.getBytes(StandardCharsets.UTF_16LE)), "filename", k);
        has("attachment; filename*=UTF-16''" + pct(k.getBytes(StandardCharsets.UTF_16)), "filename", k);
        has("attachment; filename*=IBM037''" + pct(k.getBytes(Charset.forName("IBM037"))), "filename", k);
        has("form-data; name*0=\"_me\"; name*1=\"thod\"", "name", "_method");
        has("form-data; name*0*=UTF-8''%5Fme; name*1*=thod", "name", "_method");
        has("form-data; name*0=\"_method\"", "name", "_method");
        has("form-data; name*00=\"_me\"; name*01=\"thod\"", "name", "_method");
        has("form-data; name*1=\"thod\"; name*0=\"_me\"", "name", "_method");
        has("form-data; name=\"f\"; filename=\"\\s\\k\\-\\x\"", "filename", "sk-x");
        has("form-data; filename=\"=?utf-8?Q?sk-=70roj?=\"", "filename", "sk-proj");
    }

    /** Werkzeug 3.1 joins in the order written, a plain value first, and keeps percent text without a charset. */
    @Test
    void werkzeugJoinsInTheOrderWritten() {
        has("form-data; name=\"x\"; name*0=\"_method\"", "name", "x_method");
        has("form-data; name*1=\"thod\"; name*0=\"_me\"", "name", "thod_me");
        has("form-data; name*0*=%5Fmethod", "name", "%5Fmethod");
        has("form-data; name*0*=%5Fmethod", "name", "_method");
    }

    @Test
    void repeatedSectionsAndMalformedKeepEveryReading() {
        List<String> r = read("a; n*0=x; n*0=y; n*1=z", "n");
        assertTrue(r.contains("xz") && r.contains("yz"), r::toString);
        has("a; n*=no-prefix%41", "n", "no-prefixA");
        has("a; n*=no-prefix%41", "n", "no-prefix%41");
        has("a; n*=bogus-charset''%41%42", "n", "AB");
        has("a; n*='';x", "n", "");
        Map<String, List<String>> m = HeaderParameters.readings("\"; ;=; \\", false).byName();
        assertTrue(m.values().stream().allMatch(l -> l.size() <= 20), m::toString);
    }

    @Test
    void readingsStayLinearInTheValue() {
        StringBuilder v = new StringBuilder("a");
        for (int i = 0; i < 2000; i++) {
            v.append("; n*").append(i).append("*=%41%42");
        }
        long total = HeaderParameters.readings(v.toString(), false).byName().values().stream().flatMap(List::stream)
                .mapToLong(String::length).sum();
        assertTrue(total <= 20L * v.length(), () -> "total " + total);
    }

    static String pct(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            s.append(String.format("%%%02X", x & 0xff));
        }
        return s.toString();
    }

    @Test
    void aCharsetThatCannotBeDecodedIsUnreadableNotUtf8() {
        // attacker pass 7, P9-4 / P9-6: Python's urllib and email decode these and return the credential
        String utf7 = "+AHMAawAtAHAAcgBvAGo-"; // "sk-proj" in UTF-7 (RFC 2152)
        for (String v : List.of("attachment; filename*=UTF-7''" + utf7, "attachment; filename*=utf_7''" + utf7,
                "attachment; filename*=unicode_escape''%5Cu0073k-proj",
                "attachment; filename*=Raw-Unicode-Escape''x", "attachment; filename*=punycode''x",
                "attachment; filename*=idna''x", "attachment; filename*=rot13''fx-cebw",
                "attachment; filename*=x-unknown''%41", "attachment; filename*0*=UTF-7''" + utf7 + "; filename*1=b",
                "attachment; filename*0*=x-unknown''a; filename*1*=b",
                "attachment; filename=\"=?UTF-7?B?K0FITUFhd0F0QUhBQWNnQnZBR28t?=\"",
                "attachment; filename=\"=?unicode_escape?Q?=5Cu0073k?=\"",
                "attachment; filename=\"=?UTF-7*en?Q?x?=\"")) {
            assertTrue(unreadable(v, "filename"), v);
        }
        assertTrue(EncodedWords.decode("Subject =?UTF-7?B?K0FITUFhdy0=?= x").unreadable());
        assertTrue(EncodedWords.decode("=?unicode-escape?Q?=5Cu0073k?=").unreadable());
    }

    @Test
    void octetsTheCharsetRejectsAreUnreadableNotReplaced() {
        // attacker pass 8, P10-2 / P10-3 / P10-5: the JDK rejects these escapes (U+FFFD when read leniently), Python's
        // iso2022_jp_2 / iso2022_kr codecs accept them and read the credential or _method
        for (String v : List.of("attachment; filename*=iso-2022-jp-2''%6B%1B%2E%41%39%51%37%7A",
                "attachment; filename*=iso-2022-jp-2''%6B%1B%24%41%1B%28%42%39%51",
                "attachment; filename*=iso-2022-jp-2''%6B%1B%24%28%43%1B%28%42%39%51",
                "form-data; name*=iso-2022-jp-2''%5F%1B%2E%41method",
                "form-data; name*0*=iso-2022-jp-2''%5F%1B%2E%41; name*1=method",
                "attachment; filename=\"=?iso-2022-jp-2?B?axsuQTlRN3o=?=\"",
                "attachment; filename*=Shift_JIS''%81")) {
            assertTrue(unreadable(v, "filename") || unreadable(v, "name"), v);
        }
        assertTrue(EncodedWords.decode("X =?iso-2022-jp-2?Q?k=1B.A9Q7z?= y").unreadable());
        assertNull(HeaderCharsets.decode(new byte[] {'k', 0x1b, '.', 'A', '9'}, Charset.forName("ISO-2022-JP-2")));
        // a clean ISO-2022-JP value is still read, and malformed UTF-8 stays readable (every reader replaces alike)
        byte[] jp = "\u65e5\u672c-k".getBytes(Charset.forName("ISO-2022-JP"));
        has("attachment; filename*=iso-2022-jp''" + pct(jp), "filename", "\u65e5\u672c-k");
        assertFalse(unreadable("attachment; filename*=iso-2022-jp''" + pct(jp), "filename"));
        assertFalse(EncodedWords.decode("=?iso-2022-jp?B?" + java.util.Base64.getEncoder().encodeToString(jp) + "?=")
                .unreadable());
        assertFalse(unreadable("attachment; filename*=UTF-8''%FFa", "filename"));
        assertFalse(EncodedWords.decode("=?utf-8?Q?=FFa?=").unreadable());
    }

    @Test
    void aCharsetThisRuntimeDecodesIsReadable() {
        for (String v : List.of("attachment; filename*=UTF-8''%41", "attachment; filename*=''%41",
                "attachment; filename*=utf_8''%41", "attachment; filename*=\"UTF 8\"''%41",
                "attachment; filename*=%41", "attachment; filename=\"=?utf-8?B?QQ==?=\"", "attachment; filename=A",
                "attachment; filename*0*=UTF-16LE''%41%00; filename*1*=%42%00")) {
            assertFalse(unreadable(v, "filename"), v);
        }
        assertFalse(EncodedWords.decode("=?ISO-8859-1?Q?a?= =?utf-8?B?QQ==?=").unreadable());
        assertFalse(HeaderParameters.readings("attachment; filename*=x-unknown''a; size=1", false).unreadable()
                .contains("size"));
    }

    @Test
    void ebcdicIsReadWhereTheRuntimeHasIt() {
        // cp037 is in jdk.charsets: the runtime image links it (docs/BENCHMARKS.md, "Image size"), so it is read
        byte[] ebcdic = "_method".getBytes(Charset.forName("IBM037"));
        String v = "form-data; name*=cp037''" + pct(ebcdic);
        has(v, "name", "_method");
        assertFalse(unreadable(v, "name"));
        assertTrue(HeaderCharsets.readable("IBM037") && HeaderCharsets.readable("Shift_JIS")
                && HeaderCharsets.readable("shift-jis") && HeaderCharsets.readable("GBK"));
    }

    @Test
    void anExtendedCharsetParameterInACharsetThatCannotBeReadIsNotDecoded() {
        assertEquals("utf-16", ExtendedCharset.decode(List.<String[]>of(new String[] {"charset*", "UTF-8''utf-16"})));
        for (String v : List.of("UTF-7''utf-8", "unicode_escape''utf-8", "x-unknown''utf-8")) {
            org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                    () -> ExtendedCharset.decode(List.<String[]>of(new String[] {"charset*", v})), v);
        }
    }

    @Test
    void utf16AndUtf32WithoutAByteOrderMarkAreAlsoReadLittleEndianAsPythonReadsThem() {
        has("form-data; name*=utf-16''" + pct("_method".getBytes(StandardCharsets.UTF_16LE)), "name", "_method");
        has("form-data; name*=UTF-32''" + pct("_method".getBytes(Charset.forName("UTF-32LE"))), "name", "_method");
        has("form-data; name*=utf-16''" + pct("_method".getBytes(StandardCharsets.UTF_16BE)), "name", "_method");
        has("form-data; name*0*=utf-16''" + pct("_me".getBytes(StandardCharsets.UTF_16LE)) + "; name*1*="
                + pct("thod".getBytes(StandardCharsets.UTF_16LE)), "name", "_method");
    }

    /** An encoded word in {@code utf-16} or {@code utf-32} without a byte order mark is read both ways too. */
    @Test
    void utf16AndUtf32EncodedWordsAreAlsoReadLittleEndian() {
        java.util.Base64.Encoder b64 = java.util.Base64.getEncoder();
        has("form-data; name=\"=?utf-16?B?" + b64.encodeToString("_method".getBytes(StandardCharsets.UTF_16LE))
                + "?=\"", "name", "_method");
        has("form-data; name=\"=?UTF-32?B?" + b64.encodeToString("_method".getBytes(Charset.forName("UTF-32LE")))
                + "?=\"", "name", "_method");
        has("form-data; name=\"=?utf-16?B?" + b64.encodeToString("_method".getBytes(StandardCharsets.UTF_16BE))
                + "?=\"", "name", "_method");
        EncodedWords.Decoded d = EncodedWords.decode("=?utf-16?Q?" + "a".repeat(0) + "_=00m=00?=");
        assertEquals(" m", d.pythonText());
        assertFalse(d.unreadable());
    }

    @Test
    void pythonNormalisesCodecNames() {
        assertEquals("utf_7", HeaderCharsets.pythonName(" UTF--7 "));
        assertEquals("unicode_escape", HeaderCharsets.pythonName("Unicode Escape"));
        assertEquals("latin.1", HeaderCharsets.pythonName("-Latin.1-"));
        assertFalse(HeaderCharsets.readable("unicode escape"));
        assertTrue(HeaderCharsets.readable(" utf_8 "));
        assertTrue(HeaderCharsets.readable(null) && HeaderCharsets.readable(" "));
    }

    static String b64(byte[] b) {
        return Base64.getEncoder().encodeToString(b);
    }
}
