package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The text a scan reads, decoded from some input bytes (a body, a multipart part, another view's text), and the way
 * back: edits of the text become edits of the input, so a redaction rewrites only the input bytes that encode a match
 * and leaves every other byte as it was.
 *
 * <p>The text is UTF-8, or bytes in which every byte below 0x80 is that ASCII character and every other byte belongs
 * to a non-ASCII character: that is all the scanner needs, because its patterns are ASCII only. Independent pieces of
 * text (multipart parts) are separated by a NUL byte, which no pattern matches or crosses.
 */
abstract class TextView {
    /** {@return the decoded text, from position 0 to its limit; read-only use} */
    abstract ByteBuffer text();

    /**
     * Translates edits of {@link #text()} into edits of the input.
     *
     * @param edits in increasing order, not overlapping; each covers only ASCII characters of the text, and its
     *     replacement is ASCII
     * @return the edits of the input, in increasing order, not overlapping; each replacement is encoded the way the
     *     input encodes text (escaped, percent-encoded, transcoded, ...) and is ASCII unless the input's charset is not
     *     ASCII-compatible
     */
    abstract List<Edit> toInput(List<Edit> edits);

    /**
     * {@return whether some content of this view is read in two ways ({@link TwoReadings}), so a redaction is checked
     * by reading its result again}
     */
    boolean twoReadings() {
        return false;
    }

    /**
     * {@return whether the text is known to hold none of the bytes that start a sequence {@link DroppedText} drops
     * (ESC, SO, SI, {@code ~}); {@code false} when unknown} The charset layer learns it while checking UTF-8
     * ({@link Utf8#check}), so such text is not read again for them.
     */
    boolean shiftFree() {
        return false;
    }

    /** {@return a view whose text is {@code input} itself} @param input the bytes */
    static TextView identity(ByteBuffer input) {
        return identity(input, false);
    }

    /**
     * {@return a view whose text is {@code input} itself}
     *
     * @param input the bytes
     * @param shiftFree whether the bytes are known to hold no ESC, SO, SI or {@code ~} ({@link #shiftFree()})
     */
    static TextView identity(ByteBuffer input, boolean shiftFree) {
        return new TextView() {
            @Override
            boolean shiftFree() {
                return shiftFree;
            }

            @Override
            ByteBuffer text() {
                return input;
            }

            @Override
            List<Edit> toInput(List<Edit> edits) {
                return edits;
            }
        };
    }

    /**
     * {@return a view that reads {@code upper}'s text, where {@code upper} decodes {@code lower}'s text}
     *
     * @param lower the view of the input
     * @param upper a view whose input is {@code lower.text()}
     */
    static TextView stacked(TextView lower, TextView upper) {
        return new TextView() {
            @Override
            ByteBuffer text() {
                return upper.text();
            }

            @Override
            List<Edit> toInput(List<Edit> edits) {
                return lower.toInput(upper.toInput(edits));
            }

            @Override
            boolean twoReadings() {
                return lower.twoReadings() || upper.twoReadings();
            }
        };
    }

    /**
     * An input whose escapes (or other units) decode to a text made in advance: the text, and the way back through
     * the units ({@link Units}).
     */
    abstract static class Escaped extends Units {
        /** The decoded text. */
        private final ByteBuffer text;

        Escaped(ByteBuffer input, ByteBuffer text) {
            super(input, 0);
            this.text = text;
        }

        @Override
        final ByteBuffer text() {
            return text;
        }
    }

    /**
     * A view whose input is a sequence of units, each decoding to some bytes of the text in order: an escape, a
     * percent-encoded byte, a UTF-16 code unit, a soft line break (decoding to nothing). The way back walks the units
     * again; it is only taken when something is redacted.
     */
    abstract static class Units extends TextView {
        /** The input. */
        final ByteBuffer input;
        /** Where the first unit starts in the input (after a byte order mark, for example). */
        final int first;

        Units(ByteBuffer input, int first) {
            this.input = input;
            this.first = first;
        }

        /**
         * {@return the unit at input offset {@code i}: its input length (at least 1) times 2^32 plus the number of
         * text bytes it decodes to}
         *
         * @param i a unit's start, below the input's limit
         */
        abstract long unit(int i);

        /** {@return an ASCII replacement of the text encoded as this input encodes text} @param ascii the text */
        abstract byte[] encode(byte[] ascii);

        static long unit(int inputLength, int textLength) {
            return ((long) inputLength << 32) | textLength;
        }

        @Override
        final List<Edit> toInput(List<Edit> edits) {
            List<Edit> out = new ArrayList<>(edits.size());
            int i = first;
            int d = 0;
            int n = input.limit();
            for (Edit e : edits) {
                Interrupts.check(); // the walk between two edits reads at most the input once
                int unitStart = i;
                while (d < e.start() && i < n) {
                    unitStart = i;
                    long u = unit(i);
                    i += (int) (u >>> 32);
                    d += (int) u;
                }
                int start = d > e.start() ? unitStart : i;
                while (d < e.end() && i < n) {
                    long u = unit(i);
                    i += (int) (u >>> 32);
                    d += (int) u;
                }
                out.add(new Edit(start, i, encode(e.replacement())));
            }
            return out;
        }
    }
}
