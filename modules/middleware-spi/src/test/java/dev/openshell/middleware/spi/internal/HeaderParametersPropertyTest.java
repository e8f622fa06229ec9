package dev.openshell.middleware.spi.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** A secret written in any of the encodings readers decode, in any of the charsets, is always read. */
class HeaderParametersPropertyTest {
    static final List<String> CHARSETS = List.of("UTF-8", "UTF-16LE", "UTF-16BE", "UTF-16", "UTF-32", "UTF-32LE",
            "IBM037", "ISO-8859-1");

    enum Form { EXTENDED, EXTENDED_QUOTED, CONTINUATION_EXTENDED, CONTINUATION_PLAIN, CONTINUATION_PADDED,
        CONTINUATION_SHUFFLED, LONE_SECTION, WORD_B, WORD_Q, WORDS_SPLIT, QUOTED_PAIRS }

    @Provide
    Arbitrary<String> secrets() {
        return Arbitraries.strings().withCharRange('a', 'z').withCharRange('A', 'Z').withCharRange('0', '9')
                .withChars('-', '_', '.').ofMinLength(8).ofMaxLength(48);
    }

    @Property(tries = 400)
    void everyFormIsRead(@ForAll("secrets") String secret, @ForAll Form form, @ForAll("charsets") String charset,
            @ForAll long seed) {
        Random rnd = new Random(seed);
        String param = encode(secret, form, charset, rnd);
        String value = "attachment; x=\"y;z\"; " + param + "; size=3";
        List<String> r = HeaderParameters.readings(value, false).byName().get("filename");
        assertTrue(r != null && r.contains(secret), () -> value + " reads " + r);
    }

    @Provide
    Arbitrary<String> charsets() {
        return Arbitraries.of(CHARSETS);
    }

    static String encode(String secret, Form form, String charset, Random rnd) {
        return encode(secret, secret.getBytes(Charset.forName(charset)), form, charset, rnd);
    }

    /**
     * Any charset name this runtime has no decoder for (Python's codecs that are no JDK charset, any case and
     * separator, and made-up names), declared by any form that declares one, makes the parameter unreadable: never
     * read as UTF-8 alone (attacker pass 7, P9-4 / P9-6).
     */
    @Property(tries = 300)
    void aCharsetNoDecoderHereKnowsIsUnreadable(@ForAll("secrets") String secret, @ForAll("declaring") Form form,
            @ForAll("undecodable") String charset, @ForAll long seed) {
        String value = "attachment; x=\"y\"; " + encode(secret, secret.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                form, charset, new Random(seed)) + "; size=3";
        HeaderParameters.Readings r = HeaderParameters.readings(value, false);
        assertTrue(r.unreadable().contains("filename") && !r.unreadable().contains("size"),
                () -> value + " reads " + r);
    }

    @Provide
    Arbitrary<Form> declaring() {
        return Arbitraries.of(Form.EXTENDED, Form.EXTENDED_QUOTED, Form.CONTINUATION_EXTENDED,
                Form.CONTINUATION_PADDED, Form.CONTINUATION_SHUFFLED, Form.LONE_SECTION, Form.WORD_B, Form.WORD_Q,
                Form.WORDS_SPLIT);
    }

    @Provide
    Arbitrary<String> undecodable() {
        Arbitrary<String> python = Arbitraries.of("utf_7", "utf-7", "UTF7", "U7", "unicode_escape",
                "raw_unicode_escape", "punycode", "idna", "rot13", "rot_13", "utf_8_sig", "unicode_internal", "mbcs",
                "base64_codec", "hex", "zlib", "uu", "quopri", "x-unknown");
        Arbitrary<String> made = Arbitraries.strings().withCharRange('a', 'z').withChars('-', '_', ' ')
                .ofMinLength(3).ofMaxLength(12).map(x -> "zz" + x).filter(n -> !HeaderCharsets.readable(n));
        return Arbitraries.oneOf(python, made);
    }

    static String encode(String secret, byte[] octets, Form form, String charset, Random rnd) {
        String pct = HeaderParametersTest.pct(octets);
        switch (form) {
            case EXTENDED:
                return "filename*=" + charset + "'" + (rnd.nextBoolean() ? "en" : "") + "'" + pct;
            case EXTENDED_QUOTED:
                return "FILENAME*=\"" + charset + "''" + pct + "\"";
            case CONTINUATION_EXTENDED:
            case CONTINUATION_PADDED:
            case CONTINUATION_SHUFFLED: {
                List<String> parts = split(pct, 3, rnd);
                List<String> out = new ArrayList<>();
                for (int i = 0; i < parts.size(); i++) {
                    String n = form == Form.CONTINUATION_PADDED ? String.format("%02d", i) : Integer.toString(i);
                    out.add("filename*" + n + "*=" + (i == 0 ? charset + "''" : "") + parts.get(i));
                }
                if (form == Form.CONTINUATION_SHUFFLED) {
                    java.util.Collections.shuffle(out, rnd);
                }
                return String.join("; ", out);
            }
            case CONTINUATION_PLAIN: {
                List<String> parts = split(secret, 1, rnd);
                List<String> out = new ArrayList<>();
                for (int i = 0; i < parts.size(); i++) {
                    out.add("filename*" + i + "=" + (rnd.nextBoolean() ? "\"" + parts.get(i) + "\"" : parts.get(i)));
                }
                return String.join("; ", out);
            }
            case LONE_SECTION:
                return "filename*0*=" + charset + "''" + pct;
            case WORD_B:
                return "filename=\"=?" + charset + "?B?" + Base64.getEncoder().encodeToString(octets) + "?=\"";
            case WORD_Q:
                return "filename=\"=?" + charset + "?Q?" + pct.replace('%', '=') + "?=\"";
            case WORDS_SPLIT: {
                List<String> parts = split(pct.replace('%', '='), 3, rnd);
                List<String> out = new ArrayList<>();
                for (String p : parts) {
                    out.add("=?" + charset + "?Q?" + p + "?=");
                }
                return "filename=\"" + String.join(" ", out) + "\"";
            }
            default: {
                StringBuilder b = new StringBuilder("filename=\"");
                for (char c : secret.toCharArray()) {
                    b.append(rnd.nextBoolean() ? "\\" : "").append(c);
                }
                return b.append('"').toString();
            }
        }
    }

    /** {@return {@code s} cut into 1 to 5 pieces, at multiples of {@code unit}} */
    static List<String> split(String s, int unit, Random rnd) {
        int units = s.length() / unit;
        int pieces = 1 + rnd.nextInt(Math.min(5, units));
        List<String> out = new ArrayList<>();
        int at = 0;
        for (int p = pieces; p > 1; p--) {
            int left = units - at / unit;
            int take = 1 + rnd.nextInt(Math.max(1, left - p + 1));
            out.add(s.substring(at, at + take * unit));
            at += take * unit;
        }
        out.add(s.substring(at));
        return out;
    }
}
