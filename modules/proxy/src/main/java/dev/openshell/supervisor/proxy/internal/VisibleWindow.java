package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.DroppedSequences;

/**
 * Where the held-back tail of a streamed scrub starts ({@link SecretScrubber.Scrubbing}): the last {@code visible}
 * bytes that are not sequences a stateful-encoding decoder drops (ISO 2022 escape sequences, SO/SI, the HZ shifts:
 * {@link DroppedSequences}), plus the sequences among and after them.
 *
 * <p>A tail of a fixed number of bytes, cut where a spelling with more sequences than fit follows a start of the
 * secret, would tell the sandbox by cut or not cut whether a reflected guess is a prefix of the key. Counting the
 * window in bytes that are not sequences makes every
 * position before it decidable for any number of sequences ({@link DroppedSpelling} skips them without a bound), and
 * the one cut left, {@link #tooLong}, looks at how many bytes of sequences are held, whatever the text spells. Both
 * depend on the bytes' kinds only: the same for every secret of the same length.
 *
 * <p>The bytes are read once, left to right, as sequences and single bytes (a sequence is read at a position where
 * one starts, as {@link DroppedSpelling#skippable} answers), carrying a sequence the stream may still complete over to
 * the next write; a run of bytes none of which can start a sequence is recorded by its last {@code visible}
 * positions only, so text without sequences costs one comparison per byte. Positions are absolute stream offsets.
 * Linear in the stream, memory {@code visible} longs. Not thread-safe: one response.
 */
final class VisibleWindow {
    /** The most bytes of sequences held beyond the window before the stream is cut: 64 KiB. */
    static final int MAX_HELD_SEQUENCE_BYTES = 64 * 1024;

    private final long[] ring;
    private int count;
    private int head;
    /** The absolute offset of the next byte not yet read. */
    private long read;

    /** @param visible the bytes that are not sequences to hold back, at least 1 */
    VisibleWindow(int visible) {
        ring = new long[Math.max(1, visible)];
    }

    /**
     * Reads what is new in {@code buf[from, n)} and {@return where the held-back tail starts, relative to
     * {@code from}}: 0 while fewer than {@code visible} bytes that are not sequences are in it (everything is held).
     *
     * @param buf the held bytes and the new ones
     * @param from where they start
     * @param n their end
     * @param base the absolute offset of {@code buf[from]}
     */
    int heldFrom(byte[] buf, int from, int n, long base) {
        int p = from + (int) (Math.max(read, base) - base);
        long offset = base - from;
        while (p < n) {
            int q = p;
            while (q < n && !DroppedSequences.mayStart(buf[q])) {
                q++;
            }
            if (q > p) {
                record(offset, p, q);
                p = q;
                continue;
            }
            int s = DroppedSpelling.skippable(buf, p, n);
            if (s < 0) {
                break; // a sequence the next write may complete
            }
            if (s > 0) {
                p += s;
                continue;
            }
            record(offset, p, p + 1);
            p++;
        }
        read = base + p - from;
        if (count < ring.length) {
            return 0;
        }
        return (int) Math.max(0, ring[head] - base); // the oldest of the last `visible`
    }

    /** Records the positions {@code [a, b)} of bytes that are not sequences: only the last {@code visible} matter. */
    private void record(long offset, int a, int b) {
        for (int i = Math.max(a, b - ring.length); i < b; i++) {
            ring[head] = offset + i;
            head = head + 1 == ring.length ? 0 : head + 1;
        }
        count = (int) Math.min((long) count + (b - a), ring.length);
    }

    /** {@return whether a held-back tail of {@code held} bytes holds more sequences than the bound} */
    boolean tooLong(int held) {
        return held > (long) ring.length + MAX_HELD_SEQUENCE_BYTES;
    }
}
