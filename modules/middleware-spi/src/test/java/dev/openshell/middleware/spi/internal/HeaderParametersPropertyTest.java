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
        List<String> r = HeaderParameters.readings(value, false).get("filename");
        assertTrue(r != null && r.contains(secret), () -> value + " reads " + r);
    }

    @Provide
    Arbitrary<String> charsets() {
        return Arbitraries.of(CHARSETS);
    }

    static String encode(String secret, Form form, String charset, Random rnd) {
        Charset cs = Charset.forName(charset);
        byte[] octets = secret.getBytes(cs);
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
