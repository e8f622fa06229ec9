package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import org.apiguardian.api.API;

/**
 * Which charset a header parameter or RFC 2047 encoded word declares, and whether it can be read: the one rule of
 * {@link HeaderParameters} and {@link EncodedWords} (attacker pass 7, P9-4 and P9-6). A declared charset is read only
 * in a charset this runtime decodes (the JDK's, {@code jdk.charsets} included in the runtime image: Shift_JIS, GBK,
 * EUC-*, Big5, IBM037, ...). A name it does not know is <em>unreadable</em>, never read as UTF-8 in its stead: Python
 * knows codecs the JDK has no charset for ({@code UTF-7}, RFC 2152; and codecs that are no charset at all:
 * {@code unicode_escape}, {@code raw_unicode_escape}, {@code punycode}, {@code idna}, {@code rot13}, ...), and its
 * {@code email} and {@code urllib} decode a value in them, so what such a reader finds is not known. UTF-7 is counted
 * unreadable rather than decoded here: no header reader needs it, and a decoder of our own would have to follow
 * Python's lenient one on every malformed run.
 *
 * <p>A name is looked up as written (the JDK's names and aliases, any case), then as Python normalises a codec name
 * ({@code encodings.normalize_encoding}: lower case, every run of characters other than letters, digits and {@code .}
 * one {@code _}, leading and trailing ones dropped) with that {@code _} read as {@code -} and as nothing
 * ({@code UTF_8}, {@code utf 8} and {@code Shift-JIS} are read); a name found neither way is unreadable. A blank or
 * absent name declares none (Python reads such a value as US-ASCII or UTF-8): readable, in UTF-8. A charset the JDK
 * knows but cannot decode with is unreadable too.
 *
 * <p><b>Decoding that is not clean is unreadable</b> (attacker pass 8, P10-2, P10-3, P10-5): octets a charset's
 * decoder rejects as malformed or unmappable ({@link #decode} returns null) make the value or word unreadable, never
 * read with U+FFFD in their stead. Python's codecs accept input the JDK's decoders reject (ISO-2022-JP-2's
 * {@code ESC . A} G2 designation, {@code ESC $ A}, {@code ESC $ ( C}, ISO-2022-KR's {@code ESC ( B}, ...), so a
 * reading with replacement characters may miss what Python reads. UTF-8 and US-ASCII are the exceptions: every reader
 * replaces a malformed sequence there without taking the ASCII octets after it, so their lenient reading is complete.
 * Static methods only; never throws.
 */
@API(status = INTERNAL, since = "0.2")
public final class HeaderCharsets {
    private HeaderCharsets() {
    }

    /**
     * {@return whether a value declared in this charset can be read} True for no name (blank or null) and for any
     * charset {@link #charset} finds.
     *
     * @param name the declared name as written (an RFC 2231 {@code charset'} prefix, an RFC 2047 word's charset
     *     without its {@code *language} suffix), or null
     */
    public static boolean readable(String name) {
        return name == null || name.isBlank() || charset(name) != null;
    }

    /** {@return the charset a name declares, or null when it declares none or this runtime cannot decode it} */
    public static Charset charset(String name) {
        if (name == null || name.isBlank()) {
            return null;
        }
        Charset cs = lookup(name.strip());
        if (cs == null) {
            String python = pythonName(name);
            cs = python.isEmpty() ? null : lookup(python.replace('_', '-'));
            cs = cs != null || python.isEmpty() ? cs : lookup(python.replace("_", ""));
        }
        return cs;
    }

    /**
     * {@return the charsets a value declared in this charset is read in: none when it declares none or cannot be read;
     * the charset; and for {@code UTF-16} and {@code UTF-32} (no byte order in the name) also as Python reads them
     * without a byte order mark, little-endian (the JDK reads them big-endian): {@code x-UTF-16LE-BOM} (a byte order
     * mark honoured, else little-endian, as Python's {@code utf-16}) and {@code UTF-32LE}} Python's reading is last.
     *
     * @param name the declared name as written, or null
     */
    public static List<Charset> decoders(String name) {
        Charset cs = charset(name);
        if (cs == null) {
            return List.of();
        }
        return switch (cs.name()) {
            case "UTF-16" -> List.of(cs, Charset.forName("x-UTF-16LE-BOM"));
            case "UTF-32" -> List.of(cs, Charset.forName("UTF-32LE"));
            default -> List.of(cs);
        };
    }

    /**
     * {@return {@code octets} decoded in {@code cs}, or null when {@code cs} rejects them (malformed or unmappable
     * input, a truncated sequence at the end)} UTF-8 and US-ASCII decode leniently (U+FFFD for a malformed sequence),
     * never null: see the class comment.
     *
     * @param octets the octets, any length
     * @param cs a charset that can decode ({@link #charset})
     */
    public static String decode(byte[] octets, Charset cs) {
        if (cs.equals(StandardCharsets.UTF_8) || cs.equals(StandardCharsets.US_ASCII)) {
            return new String(octets, cs);
        }
        try {
            return cs.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(octets)).toString();
        } catch (CharacterCodingException | RuntimeException e) {
            return null; // not clean: what a more lenient reader (Python's codec) reads in it is not known
        }
    }

    /** {@return the name as Python's {@code encodings.normalize_encoding} reads it, lower case} */
    static String pythonName(String name) {
        StringBuilder b = new StringBuilder(name.length());
        boolean gap = false;
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c < 0x80 && (Character.isLetterOrDigit(c) || c == '.')) {
                if (gap && !b.isEmpty()) {
                    b.append('_');
                }
                b.append(c);
                gap = false;
            } else {
                gap = true;
            }
        }
        return b.toString().toLowerCase(Locale.ROOT);
    }

    private static Charset lookup(String name) {
        try {
            Charset cs = Charset.forName(name);
            cs.newDecoder(); // a charset that cannot decode throws UnsupportedOperationException
            return cs;
        } catch (RuntimeException e) {
            return null; // an unknown or illegal name
        }
    }
}
