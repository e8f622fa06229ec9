package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * Text as a decoder of a stateful encoding or an HTML parser reads it, without the sequences it drops (attacker
 * pass 8, P10-6; pass 15c, P17c-1; pass 16, P18-1 and P18-2): ISO 2022 escape sequences (ESC
 * 0x1B, one to three intermediate bytes 0x20-0x2F, a final byte 0x30-0x7E: {@code ESC ( B}, {@code ESC $ B},
 * {@code ESC $ ) C}, ...), the ISO-2022-KR shifts SO and SI (0x0E, 0x0F), the HZ shifts <code>~&#123;</code> and
 * <code>~&#125;</code> and the HZ line continuation {@code ~} LF dropped. A server that sniffs an undeclared charset
 * (charset_normalizer: ISO-2022-JP, ISO-2022-KR, HZ) reads {@code ghp_ ESC ( B R8xq...} as the token; this reading
 * has it too. Dropping every such sequence is a superset of what a decoder drops (text shifted into a double-byte set
 * is not ASCII when decoded), so it finds at least what those readers find. Every other C0 control but TAB, LF and
 * CR (NUL in runs of at most 32), and an ESC that starts no escape sequence ({@code ESC N} too), is dropped alone, as libxml2's HTML parser
 * drops it ({@link #shorterView} is that parser's reading where an ESC makes the two differ), and so are character
 * references to characters a parser drops ({@code &#1;}, {@code &#xffff;}) and the UTF-8 of U+FFFE and U+FFFF. The
 * rule of which sequences go has one home, {@link DroppedSequences} (shared with the response scrub), whose word-at-a-time search finds the first one. One
 * linear pass; the way back maps each dropped sequence to no text, so a redaction replaces the sequences inside a match
 * with it.
 */
final class DroppedText {

    private DroppedText() {
    }

    /**
     * {@return the reading of {@code input} without those sequences, or {@code null} when it holds none}
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView view(ByteBuffer input) {
        return reading(input, DroppedSequences.first(input, input.limit()), false);
    }

    /**
     * {@return the reading of {@code input} as libxml2's HTML parser reads it, each sequence dropped at its shorter
     * length ({@link DroppedSequences#shorter}: an escape sequence's ESC alone), or {@code null} when it holds no
     * escape sequence (then it is {@link #view})} (attacker pass 15c, P17c-1: {@code sk ESC -proj-...}, where
     * {@link #view} drops {@code ESC - p}, libxml2 only the ESC).
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView shorterView(ByteBuffer input) {
        int n = input.limit();
        for (int i = 0; i < n; i++) {
            int d = DroppedSequences.mayHaveShorter(input.get(i)) ? dropped(input, i) : 0;
            if (d > 1 && DroppedSequences.shorter(input, i, d) != d) {
                return reading(input, DroppedSequences.first(input, n), true);
            }
        }
        return null;
    }

    /** {@return the reading of {@code input} from its first dropped sequence at {@code i}, or {@code null} if none} */
    private static TextView reading(ByteBuffer input, int i, boolean shorter) {
        int n = input.limit();
        if (i >= n) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(n);
        for (int k = 0; k < i; k++) {
            out.write(input.get(k));
        }
        int check = 0;
        while (i < n) {
            if (i >= check) {
                check = Interrupts.checkAt(i);
            }
            int d = dropped(input, i, shorter);
            if (d > 0) {
                i += d;
            } else {
                out.write(input.get(i++));
            }
        }
        return new Dropped(input, ByteBuffer.wrap(out.toByteArray()), shorter);
    }

    /** {@return the length of the sequence a decoder drops at {@code p} of the whole input, 0 for none} */
    static int dropped(ByteBuffer b, int p) {
        return DroppedSequences.lengthInComplete(b, p, b.limit());
    }

    /** {@return {@link #dropped}, or its shorter length ({@link DroppedSequences#shorter})} */
    private static int dropped(ByteBuffer b, int p, boolean shorter) {
        int d = dropped(b, p);
        return shorter && d > 0 ? DroppedSequences.shorter(b, p, d) : d;
    }

    private static final class Dropped extends TextView.Escaped {
        /** Whether each sequence is dropped at its shorter length ({@link #shorterView}). */
        private final boolean shorter;

        Dropped(ByteBuffer input, ByteBuffer text, boolean shorter) {
            super(input, text);
            this.shorter = shorter;
        }

        @Override
        long unit(int i) {
            int d = dropped(input, i, shorter);
            return d > 0 ? unit(d, 0) : unit(1, 1);
        }

        @Override
        byte[] encode(byte[] ascii) {
            return ascii;
        }
    }
}
