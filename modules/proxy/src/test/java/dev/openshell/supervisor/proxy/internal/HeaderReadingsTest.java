package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.CharRange;
import net.jqwik.api.constraints.Chars;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/**
 * A secret a client reads back from a response header value by unescaping quoted-pairs, decoding RFC 2047 encoded
 * words (B or Q, several joined) or joining RFC 2231 continuations is replaced by its placeholder in that reading
 * (attacker pass 5, finding 4); near misses stay byte for byte.
 */
class HeaderReadingsTest {
    static final String SECRET = "k9Q7zR2mW4xT8vN1pL6sJ3hF5dG0bCq";
    static final String PH = "openshell:resolve:env:KEY";

    private static SecretScrubber scrubber(String secret) {
        return new SecretScrubber(Map.of(secret, PH));
    }

    /** {@return the value as the head scrub leaves it: bytes first, then the readings} */
    private static String scrub(String value, SecretScrubber s) {
        String bytes = new String(s.scrubAll(value.getBytes(StandardCharsets.ISO_8859_1)), StandardCharsets.ISO_8859_1);
        return HeaderReadings.scrub(bytes, s);
    }

    private static String escapeAll(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append('\\').append(c);
        }
        return b.toString();
    }

    private static String q(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            b.append(String.format("=%02X", x & 0xff));
        }
        return b.toString();
    }

    @Test
    void quotedPairsAreUnescaped() {
        SecretScrubber s = scrubber(SECRET);
        assertEquals("Bearer realm=\"" + PH + "\"", scrub("Bearer realm=\"" + escapeAll(SECRET) + "\"", s));
        String mixed = "attachment; filename=\"a " + SECRET.substring(0, 4) + "\\" + SECRET.charAt(4)
                + SECRET.substring(5, 20) + escapeAll(SECRET.substring(20)) + " b\"";
        assertEquals("attachment; filename=\"a " + PH + " b\"", scrub(mixed, s));
        assertEquals(2, s.matches(), "each replacement counts");
        assertEquals(java.util.Set.of(PH), s.matchedNames());
    }

    @Test
    void qEncodedWordsAreDecoded() {
        SecretScrubber s = scrubber(SECRET);
        String whole = scrub("=?UTF-8?Q?" + q(SECRET) + "?=", s);
        assertEquals("=?UTF-8?Q?openshell=3Aresolve=3Aenv=3AKEY?=", whole);
        assertEquals(PH, Decode.all(whole));
        String out = scrub("x =?utf-8?q?ab_" + q(SECRET.substring(0, 10)) + SECRET.substring(10) + "_cd?= y", s);
        assertEquals("x ab " + PH + " cd y", Decode.all(out));
        assertFalse(Decode.all(out).contains(SECRET));
        assertEquals(2, s.matches());
    }

    @Test
    void adjacentEncodedWordsAreJoinedInBothEncodings() {
        SecretScrubber s = scrubber(SECRET);
        String b = Base64.getEncoder().encodeToString(SECRET.substring(9, 20).getBytes(StandardCharsets.UTF_8));
        String value = "=?UTF-8?Q?" + q(SECRET.substring(0, 9)) + "?= \t =?UTF-8?B?" + b + "?=  =?iso-8859-1?Q?"
                + SECRET.substring(20) + "_tail?=";
        assertTrue(Decode.all(value).contains(SECRET), "the reading the client has");
        String out = scrub(value, s);
        assertEquals(PH + " tail", Decode.all(out));
        assertEquals(1, s.matches());
    }

    @Test
    void encodedWordsNextToPlainTextAndOtherCharsets() {
        SecretScrubber s = scrubber(SECRET);
        String out = scrub("pre" + SECRET.substring(0, 3) + "=?UTF-8?Q?" + q(SECRET.substring(3)) + "?=post", s);
        assertEquals("pre" + PH + "post", Decode.all(out));
        byte[] utf16 = SECRET.getBytes(StandardCharsets.UTF_16BE);
        StringBuilder qb = new StringBuilder();
        for (byte x : utf16) {
            qb.append(String.format("=%02X", x & 0xff));
        }
        String out16 = scrub("=?UTF-16BE?Q?" + qb + "?=", s);
        assertFalse(out16.contains(qb), out16);
        assertEquals(PH, new String(Decode.bytes(out16), StandardCharsets.UTF_16BE));
    }

    @Test
    void rfc2231ContinuationsAreJoined() {
        SecretScrubber s = scrubber(SECRET);
        String value = "attachment; filename*1*=" + q(SECRET.substring(8, 16)).replace('=', '%')
                + "; filename*0*=UTF-8'en'%6B" + SECRET.substring(1, 8)
                + "; filename*2=\"" + escapeAll(SECRET.substring(16, 20))
                + "\"; filename*3=" + SECRET.substring(20) + "x; size=3";
        String out = scrub(value, s);
        assertEquals(PH + "x", Decode.continued(out, "filename"), out);
        assertTrue(out.endsWith("; size=3"), out);
        assertEquals(1, s.matches());
    }

    @Test
    void nearMissesStayByteForByte() {
        SecretScrubber s = scrubber(SECRET);
        String almost = SECRET.substring(0, SECRET.length() - 1);
        List<String> values = List.of(
                "Bearer realm=\"" + escapeAll(almost) + "\"",
                "Bearer realm=\"" + escapeAll(almost) + "\", error=\"x\"" + SECRET.charAt(SECRET.length() - 1),
                "=?UTF-8?Q?" + q(almost) + "?=",
                SECRET.substring(0, 4) + " =?UTF-8?Q?" + q(SECRET.substring(4)) + "?=",  // the space stays
                "=?UTF-8?Q?" + q(SECRET.substring(0, 4)) + "?= x =?UTF-8?Q?" + q(SECRET.substring(4)) + "?=",
                "=?UTF-8?X?" + q(SECRET) + "?=",
                "a; name*0=" + SECRET.substring(0, 5) + "; other*1=" + SECRET.substring(5),
                "C:\\\\dir\\\\file; x*=utf-8''%41; =?; =?a?Q?", "\\", "=?", "*");
        for (String v : values) {
            assertSame(v, HeaderReadings.scrub(v, s), v);
        }
        assertEquals(0, s.matches());
    }

    /**
     * A parameter or encoded word declared in a charset this runtime cannot decode (attacker pass 7, P9-4 / P9-6:
     * UTF-7, unicode_escape; Python's email and urllib decode them) drops the field, whatever it holds; one in a
     * charset it decodes does not.
     */
    private static String utf16Pct(String v) {
        StringBuilder b = new StringBuilder();
        for (byte x : v.getBytes(java.nio.charset.StandardCharsets.UTF_16LE)) {
            b.append(String.format("%%%02X", x & 0xff));
        }
        return b.toString();
    }

    @Test
    void unreadableCharsetDropsTheField() {
        SecretScrubber s = scrubber(SECRET);
        for (String v : List.of("attachment; filename*=UTF-7''+AGsAOQ-", "attachment; filename*=unicode_escape''x",
                "=?UTF-7?B?K0FHc0FPUS0=?=", "a =?raw-unicode-escape?Q?x?= b", "=?a?Q?".repeat(10_000),
                "attachment; filename*0*=x-unknown''a; filename*1=b", "=?a?Q?x?= ".repeat(5_000))) {
            assertEquals(null, HeaderReadings.scrub(v, s), v.substring(0, Math.min(60, v.length())));
            assertEquals(new HeaderReadings.Read(null, true), HeaderReadings.read(v, s), "dropped as unreadable");
        }
        for (String v : List.of("attachment; filename*=UTF-8''x", "=?iso-8859-1?Q?x?=", "=?Shift_JIS?B?eA==?=",
                "attachment; filename*=''x")) {
            assertSame(v, HeaderReadings.scrub(v, s), v);
            assertEquals(new HeaderReadings.Read(v, false), HeaderReadings.read(v, s));
        }
        String found = "attachment; filename*=UTF-16LE''" + utf16Pct(SECRET); // a value found, not unreadable
        HeaderReadings.Read read = HeaderReadings.read(found, s);
        assertEquals(false, read.unreadable(), found);
        assertEquals(false, read.value() != null && read.value().contains(utf16Pct(SECRET)), read.value());
    }

    /**
     * Attacker pass 8: P10-1, a value in ISO-2022-JP words with an escape sequence inside its octets (the decoded text
     * holds it, the octets do not); P10-2, a parameter in ISO-2022-JP-2 with an escape the JDK rejects and Python
     * reads. Each drops the field, or replaces the value where its octets allow (the scrub's ISO 2022 spelling) so that
     * no reading holds it; a clean ISO-2022-JP word or parameter without a value is kept.
     */
    @Test
    void iso2022EscapesInsideAValueDropTheField() {
        SecretScrubber s = scrubber(SECRET);
        String b64 = "axsoQjlRN3pSMm1XNHhUOHZOMXBMNnNKM2hGNWRHMGJDcQ=="; // k ESC ( B 9Q7z...
        for (String v : List.of("=?iso-2022-jp?B?" + b64 + "?=", "Bearer realm=\"=?iso-2022-jp?B?" + b64 + "?=\"",
                "=?iso-2022-jp?B?axsoQjlRN3pSMm1XNHhUOHZOMQ==?= =?iso-2022-jp?B?cEw2c0ozaEY1ZEcwYkNx?=",
                "=?csISO2022JP?Q?k=1B(B" + SECRET.substring(1) + "?=",
                "attachment; filename*=iso-2022-jp-2''%6B%1B%2E%41" + SECRET.substring(1),
                "</x>; rel=next; title*=iso-2022-jp-2''%6B%1B%24%41%1B%28%42" + SECRET.substring(1),
                "=?iso-2022-jp-2?Q?k=1B.A" + SECRET.substring(1) + "?=")) {
            String out = scrub(v, s);
            if (out != null) { // replaced where the octets allow it (DroppedSpelling): no reading holds the value
                dev.openshell.middleware.spi.internal.EncodedWords.Decoded d =
                        dev.openshell.middleware.spi.internal.EncodedWords.decode(out);
                assertFalse(out.contains(SECRET.substring(1)) || d.text().contains(SECRET.substring(1))
                        || d.pythonText().contains(SECRET.substring(1)), v + " -> " + out);
                assertTrue(d.text().contains("openshell"), v + " -> " + out); // the placeholder, in some spelling
            }
        }
        String clean = "=?iso-2022-jp?B?GyRCRnxLXBsoQg==?= x"; // Japanese text, no value
        assertSame(clean, HeaderReadings.scrub(clean, s));
        String param = "attachment; filename*=iso-2022-jp''%1B%24%42%46%7C%4B%5C%1B%28%42.txt";
        assertSame(param, HeaderReadings.scrub(param, s));
    }

    /** Inputs that would cost quadratic work read naively (no timing here: they only have to come back unchanged). */
    @Test
    void pathologicalValuesComeBackUnchanged() {
        SecretScrubber s = scrubber(SECRET);
        // the words' charset is one the scrub reads: one it cannot drops the field (unreadableCharsetDropsTheField)
        List<String> values = List.of("=?utf-8?Q?".repeat(10_000), "=?".repeat(20_000) + "?Q?",
                "p*0=\\x; ".repeat(5_000), "=?utf-8?Q?x?= ".repeat(5_000), "a".repeat(60_000) + "*");
        for (String v : values) {
            assertSame(v, HeaderReadings.scrub(v, s));
        }
        String many = "q*0=x; ".repeat(3_000) + "f*1=" + SECRET.substring(5) + "; f*0=" + SECRET.substring(0, 5);
        assertEquals("q*0=x; ".repeat(3_000) + "f*1=; f*0=" + PH, HeaderReadings.scrub(many, s));
    }

    @Test
    void aValueHoldingMoreThanTheBoundIsDropped() {
        SecretScrubber s = scrubber(SECRET);
        String one = "\"" + escapeAll(SECRET) + "\" ";
        assertNull(HeaderReadings.scrub(one.repeat(HeaderReadings.ROUNDS + 2), s));
        assertEquals(one.repeat(3).replace(escapeAll(SECRET), PH),
                HeaderReadings.scrub(one.repeat(3), scrubber(SECRET)));
    }

    /**
     * Whatever characters of a random secret are written as quoted-pairs or Q-encoded, and however the encoded text
     * is cut into adjacent encoded words, no reading of the result holds the secret, and each gets the placeholder.
     */
    @Property(tries = 300)
    void everyEscapingIsScrubbed(@ForAll @StringLength(min = 4, max = 40) @CharRange(from = '!', to = '~')
                                 @Chars({' '}) String secret,
                                 @ForAll @Size(min = 40, max = 40) List<@IntRange(min = 0, max = 3) Integer> how,
                                 @ForAll boolean words) {
        SecretScrubber s = scrubber(secret);
        StringBuilder b = new StringBuilder(words ? "v =?UTF-8?Q?" : "v \"");
        for (int i = 0; i < secret.length(); i++) {
            char c = secret.charAt(i);
            int h = how.get(i);
            if (words) {
                boolean plain = h == 0 && c != '=' && c != '?' && c != '_' && c != ' ';
                b.append(plain ? String.valueOf(c) : q(String.valueOf(c)));
                if (h == 3) {
                    b.append("?= =?utf-8?").append(i % 2 == 0 ? "q" : "Q").append('?');
                }
            } else {
                b.append(h != 0 || c == '"' || c == '\\' ? "\\" + c : String.valueOf(c));
            }
        }
        b.append(words ? "?= w" : "\" w");
        String out = scrub(b.toString(), s);
        String read = words ? Decode.all(out) : Decode.unquote(out);
        assertFalse(read.contains(secret), out);
        assertTrue(read.contains(PH) && s.matches() > 0, out);
    }

    /**
     * However a random secret is cut into RFC 2231 continuations, written in any order, each part extended
     * (percent-encoding any characters) or quoted (quoted-pairs for any characters), the joined parameter reads the
     * placeholder and never the secret.
     */
    @Property(tries = 200)
    void everyContinuationIsScrubbed(@ForAll @StringLength(min = 4, max = 40) @CharRange(from = '!', to = '~')
                                     String secret,
                                     @ForAll @Size(min = 40, max = 40) List<@IntRange(min = 0, max = 3) Integer> how,
                                     @ForAll boolean reversed) {
        SecretScrubber s = scrubber(secret);
        List<String> parts = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        for (int i = 0; i < secret.length(); i++) {
            cur.append(secret.charAt(i));
            if (how.get(i) == 3 || i == secret.length() - 1) {
                parts.add(cur.toString());
                cur.setLength(0);
            }
        }
        List<String> params = new ArrayList<>();
        for (int k = 0; k < parts.size(); k++) {
            String part = parts.get(k);
            boolean quoted = k % 2 == 1 && part.chars().noneMatch(c -> ";,\"\\".indexOf(c) >= 0);
            StringBuilder v = new StringBuilder(quoted ? "\"" : k == 0 ? "UTF-8''" : "");
            for (int i = 0; i < part.length(); i++) {
                char c = part.charAt(i);
                boolean escape = how.get(i) % 2 == 1 || !quoted && !Character.isLetterOrDigit(c);
                v.append(!escape ? String.valueOf(c) : quoted ? "\\" + c : String.format("%%%02X", (int) c));
            }
            params.add("f*" + k + (quoted ? "=" : "*=") + v + (quoted ? "\"" : ""));
        }
        if (reversed) {
            java.util.Collections.reverse(params);
        }
        String out = scrub("attachment; " + String.join("; ", params), s);
        String read = Decode.continued(out, "f");
        assertFalse(read.contains(secret), out);
        assertTrue(read.contains(PH) && s.matches() > 0, out);
    }

    /** Independent client-side readings, as Python's {@code email} package has them. */
    static final class Decode {
        private static final Pattern WORD = Pattern.compile("=\\?([^?]*)\\?([bBqQ])\\?(.*?)\\?=");

        static byte[] bytes(String v) {
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            Matcher m = WORD.matcher(v);
            int at = 0;
            boolean prevWord = false;
            while (m.find()) {
                String between = v.substring(at, m.start());
                if (!(prevWord && between.isBlank())) {
                    out.writeBytes(between.getBytes(StandardCharsets.ISO_8859_1));
                }
                byte[] t = m.group(3).getBytes(StandardCharsets.ISO_8859_1);
                out.writeBytes(m.group(2).equalsIgnoreCase("b") ? Base64.getMimeDecoder().decode(t)
                        : HeaderReadings.decodeQ(t, 0, t.length));
                at = m.end();
                prevWord = true;
            }
            out.writeBytes(v.substring(at).getBytes(StandardCharsets.ISO_8859_1));
            return out.toByteArray();
        }

        static String all(String v) {
            return new String(bytes(v), StandardCharsets.UTF_8);
        }

        static String unquote(String v) {
            return v.replaceAll("\\\\(.)", "$1");
        }

        /** {@return the continued parameter joined} */
        static String continued(String v, String name) {
            List<String[]> parts = new ArrayList<>();
            for (String p : v.split(";")) {
                String[] kv = p.strip().split("=", 2);
                if (kv.length == 2 && kv[0].startsWith(name + "*")) {
                    parts.add(new String[] {kv[0].substring(name.length() + 1), kv[1]});
                }
            }
            parts.sort(java.util.Comparator.comparingInt(p -> Integer.parseInt(p[0].replace("*", ""))));
            StringBuilder b = new StringBuilder();
            for (String[] p : parts) {
                String val = p[1];
                if (val.startsWith("\"")) {
                    val = unquote(val.substring(1, val.length() - 1));
                } else if (p[0].endsWith("*")) {
                    if (p[0].equals("0*")) {
                        val = val.substring(val.indexOf('\'', val.indexOf('\'') + 1) + 1);
                    }
                    val = java.net.URLDecoder.decode(val.replace("+", "%2B"), StandardCharsets.UTF_8);
                }
                b.append(val);
            }
            return b.toString();
        }
    }

    /** Attacker pass 8, P8-0: one extended parameter in a charset other than UTF-8 held the secret unread. */
    @Test
    void aSingleExtendedParameterInAnyCharsetIsScrubbed() {
        for (String cs : List.of("UTF-16LE", "UTF-16BE", "UTF-16", "UTF-32LE", "UTF-32BE", "IBM037", "IBM290",
                "ISO-8859-1", "UTF-8")) {
            byte[] octets = SECRET.getBytes(java.nio.charset.Charset.forName(cs));
            StringBuilder pct = new StringBuilder();
            for (byte x : octets) {
                pct.append(String.format("%%%02X", x & 0xff));
            }
            for (String v : List.of("attachment; filename*=" + cs + "''" + pct,
                    "attachment; filename*=\"" + cs + "'en'" + pct + "\"; size=1")) {
                String out = scrub(v, scrubber(SECRET));
                if (out != null) {
                    for (List<String> r : dev.openshell.middleware.spi.internal.HeaderParameters.readings(out, true)
                            .byName().values()) {
                        assertFalse(r.stream().anyMatch(x -> x.contains(SECRET)), () -> cs + ": " + out);
                    }
                    assertFalse(out.contains(SECRET), out);
                }
                if (!cs.equals("IBM290")) {
                    assertTrue(out != null && out.contains("filename*="), () -> cs + " kept in place: " + out);
                }
            }
        }
    }
}
