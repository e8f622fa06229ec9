package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The text encodings {@link SecretScrubber} searches each form in, and replaces it in: UTF-8, UTF-16LE and UTF-16BE
 * for every form ({@link #ALL_FORMS}); UTF-32LE, UTF-32BE and EBCDIC (IBM037, for a value of ASCII characters) for
 * the value itself only (attacker pass finding 7), since an upstream that answers in those encodings does not also
 * base64- or percent-encode what it echoes. IBM037 is mapped here for ASCII (the runtime image links no EBCDIC
 * charset).
 */
final class FormEncodings {
    /** The number of encodings every form is searched in; indices from here on are for the value itself. */
    static final int ALL_FORMS = 3;
    /** The number of encodings. */
    static final int COUNT = 6;

    private static final Charset[] CHARSETS = {StandardCharsets.UTF_8, StandardCharsets.UTF_16LE,
        StandardCharsets.UTF_16BE, Charset.forName("UTF-32LE"), Charset.forName("UTF-32BE")};

    /** IBM037 (EBCDIC, US/Canada) for ASCII 0x00..0x7F, as the JDK's and Python's cp037 codecs map it. */
    private static final byte[] IBM037 = bytes(
            0x00, 0x01, 0x02, 0x03, 0x37, 0x2d, 0x2e, 0x2f, 0x16, 0x05, 0x25, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
            0x10, 0x11, 0x12, 0x13, 0x3c, 0x3d, 0x32, 0x26, 0x18, 0x19, 0x3f, 0x27, 0x1c, 0x1d, 0x1e, 0x1f,
            0x40, 0x5a, 0x7f, 0x7b, 0x5b, 0x6c, 0x50, 0x7d, 0x4d, 0x5d, 0x5c, 0x4e, 0x6b, 0x60, 0x4b, 0x61,
            0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0x7a, 0x5e, 0x4c, 0x7e, 0x6e, 0x6f,
            0x7c, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7, 0xc8, 0xc9, 0xd1, 0xd2, 0xd3, 0xd4, 0xd5, 0xd6,
            0xd7, 0xd8, 0xd9, 0xe2, 0xe3, 0xe4, 0xe5, 0xe6, 0xe7, 0xe8, 0xe9, 0xba, 0xe0, 0xbb, 0xb0, 0x6d,
            0x79, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96,
            0x97, 0x98, 0x99, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xc0, 0x4f, 0xd0, 0xa1, 0x07);

    private FormEncodings() {
    }

    private static byte[] bytes(int... v) {
        byte[] b = new byte[v.length];
        for (int i = 0; i < v.length; i++) {
            b[i] = (byte) v[i];
        }
        return b;
    }

    /**
     * {@return {@code text} in encoding {@code e}, or {@code null} when it has no such encoding (EBCDIC of a
     * non-ASCII text)}
     *
     * @param e the encoding index, 0 to {@link #COUNT} - 1
     * @param text the text
     */
    static byte[] encode(int e, String text) {
        if (e < CHARSETS.length) {
            return text.getBytes(CHARSETS[e]);
        }
        byte[] out = new byte[text.length()];
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= 0x80) {
                return null;
            }
            out[i] = IBM037[c];
        }
        return out;
    }
}
