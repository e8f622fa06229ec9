package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.internal.Iso2022Sequences;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * Text as a decoder of a stateful encoding reads its ASCII (attacker pass 8, P10-6): ISO 2022 escape sequences (ESC
 * 0x1B, one to three intermediate bytes 0x20-0x2F, a final byte 0x30-0x7E: {@code ESC ( B}, {@code ESC $ B},
 * {@code ESC $ ) C}, ...), the ISO-2022-KR shifts SO and SI (0x0E, 0x0F), the HZ shifts <code>~&#123;</code> and
 * <code>~&#125;</code> and the HZ line continuation {@code ~} LF dropped. A server that sniffs an undeclared charset
 * (charset_normalizer: ISO-2022-JP, ISO-2022-KR, HZ) reads {@code ghp_ ESC ( B R8xq...} as the token; this reading
 * has it too. Dropping every such sequence is a superset of what a decoder drops (text shifted into a double-byte set
 * is not ASCII when decoded), so it finds at least what those readers find. Every other C0 control but NUL, TAB, LF
 * and CR, and an ESC that starts no escape sequence ({@code ESC N} too), is dropped alone, as libxml2's HTML parser
 * drops it ({@link #controlsView} is that parser's reading where an ESC makes the two differ). The rule of which sequences go has one home,
 * {@link Iso2022Sequences} (shared with the response scrub), whose word-at-a-time search finds the first one. One
 * linear pass; the way back maps each dropped sequence to no text, so a redaction replaces the sequences inside a match
 * with it.
 */
final class Iso2022Text {

    private Iso2022Text() {
    }

    /**
     * {@return the reading of {@code input} without those sequences, or {@code null} when it holds none}
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView view(ByteBuffer input) {
        int n = input.limit();
        int i = Iso2022Sequences.first(input, n);
        if (i >= n) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(n);
        for (int k = 0; k < i; k++) {
            out.write(input.get(k));
        }
        while (i < n) {
            int d = dropped(input, i);
            if (d > 0) {
                i += d;
            } else {
                out.write(input.get(i++));
            }
        }
        return new Dropped(input, ByteBuffer.wrap(out.toByteArray()), false);
    }

    /**
     * {@return the reading of {@code input} as libxml2's HTML parser reads it, every C0 control byte but NUL, TAB,
     * LF and CR dropped alone, or {@code null} when it holds no ESC} (attacker pass 15c, P17c-1). Without an ESC this
     * is what {@link #view} drops already (SO, SI and the other controls are sequences of one byte there); with one,
     * the two differ where an ESC is followed by bytes an escape sequence would take ({@code sk ESC -proj-...}:
     * {@link #view} drops {@code ESC - p}, libxml2 only the ESC).
     *
     * @param input text (UTF-8, or ASCII-compatible)
     */
    static TextView controlsView(ByteBuffer input) {
        int n = input.limit();
        int esc = -1;
        for (int i = 0; i < n && esc < 0; i++) {
            esc = input.get(i) == 0x1b ? i : -1;
        }
        if (esc < 0) {
            return null;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(n);
        for (int k = 0; k < esc; k++) {
            out.write(input.get(k));
        }
        for (int i = esc; i < n; i++) {
            byte b = input.get(i);
            if (!Iso2022Sequences.droppedControl(b)) {
                out.write(b);
            }
        }
        return new Dropped(input, ByteBuffer.wrap(out.toByteArray()), true);
    }

    /** {@return the length of the sequence a decoder drops at {@code p} of the whole input, 0 for none} */
    static int dropped(ByteBuffer b, int p) {
        return Iso2022Sequences.lengthInComplete(b, p, b.limit());
    }

    private static final class Dropped extends TextView.Escaped {
        /** Whether only single control bytes are dropped ({@link #controlsView}), not sequences. */
        private final boolean controls;

        Dropped(ByteBuffer input, ByteBuffer text, boolean controls) {
            super(input, text);
            this.controls = controls;
        }

        @Override
        long unit(int i) {
            int d = controls ? (Iso2022Sequences.droppedControl(input.get(i)) ? 1 : 0) : dropped(input, i);
            return d > 0 ? unit(d, 0) : unit(1, 1);
        }

        @Override
        byte[] encode(byte[] ascii) {
            return ascii;
        }
    }
}
