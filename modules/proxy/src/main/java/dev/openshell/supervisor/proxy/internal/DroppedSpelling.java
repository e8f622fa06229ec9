package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.DroppedSequences;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A secret as a stateful-encoding decoder (ISO-2022-JP/-KR/-CN, HZ) may read it: its UTF-8 bytes with, between any
 * two of them, sequences that such a decoder drops from the text (attacker pass 8, P10-4: {@code k ESC ( B 9Q7z...}
 * in a body without a declared charset, which a client sniffing the charset reads as the key), or that an HTML or XML
 * parser drops (C0 controls, {@code &#1;}, {@code &#xffff;}, the UTF-8 of U+FFFF: attacker passes 15c and 16). Which
 * sequences those are (ISO 2022 escape sequences, SO/SI, the HZ shifts and line continuation, the controls, character
 * references to dropped characters, U+FFFE/U+FFFF and surrogates in UTF-8) has one home, {@link DroppedSequences}
 * (shared with the {@code openshell/regex} body reading); a {@code ~} of the secret may be spelled {@code ~~}.
 * Runs of them are skipped too, any number of them in one match: what bounds a streamed match is not the secret but the
 * held-back window of {@link SecretScrubber.Scrubbing}, counted in bytes that are not such sequences
 * ({@link VisibleWindow}), whatever the text spells (attacker pass 9, P11-11: a cut taken only where a start of the
 * secret was followed by more sequences than a bound told the sandbox, a character at a time, whether its reflected
 * text was a prefix of the secret). {@link #maxSkipped()} ({@value #PER_BYTE} per byte) only sizes that window, as
 * the longest spelling it was sized for before (for a 32-byte secret 385 bytes). Skipping is a superset
 * of what a decoder drops (a span shifted into a double-byte set is not the secret when decoded): over-replacing
 * such a span by the placeholder is harmless. A byte of the text that is the secret's next byte and can also start a
 * sequence ({@code ~}, ESC, SO, SI in the secret) is read both ways, and so is a {@code ~} followed by another, so a
 * secret holding such bytes is found in every spelling: {@code k~&#125;~~9Q} (HZ: {@code k~9Q}) for {@code k~9Q},
 * {@code k ESC ( B ESC N} for {@code k ESC N}.
 */
final class DroppedSpelling implements Spelling {
    /** Inserted sequences allowed per byte of the secret. */
    static final int PER_BYTE = 2;

    /** Positions a reading advances by at most, plus one: the sets of counts held ahead ({@link #readings}). */
    private static final int RING = DroppedSequences.MAX_DROPPED + 1;

    private final byte[] raw;
    /** Whether a byte of the secret can start a sequence: a byte of the text may then be read either way. */
    private final boolean ambiguous;

    /** @param secret the secret value; not empty */
    DroppedSpelling(String secret) {
        raw = secret.getBytes(StandardCharsets.UTF_8);
        boolean any = false;
        for (byte b : raw) {
            any |= DroppedSequences.mayStart(b);
        }
        ambiguous = any;
    }

    /** {@return the most sequences skipped in one match} */
    int maxSkipped() {
        return PER_BYTE * raw.length;
    }

    @Override
    public int longest() {
        // 2: a ~ spelled ~~; 1: one byte of look-ahead
        return 2 * raw.length + maxSkipped() * DroppedSequences.MAX_SEQUENCE + 1;
    }

    @Override
    public void starts(Pairs pairs) {
        int b0 = raw[0] & 0xff;
        if (raw.length == 1) {
            pairs.pair(b0, -1);
            return;
        }
        pairs.pair(b0, raw[1] & 0xff);
        for (int b1 : DroppedSequences.startBytes()) {
            pairs.pair(b0, b1);
        }
    }

    /**
     * {@inheritDoc} Any number of sequences is skipped: a match is decided by the bytes up to {@code n}, and a
     * streamed text holds enough bytes that are not sequences after each position it scans ({@link VisibleWindow}).
     * For a secret without a byte that can start a sequence the reading is unique and read in one pass; for one with
     * such a byte ({@code ~}, ESC, SO, SI) every reading is followed ({@link #readings}).
     */
    @Override
    public int match(byte[] buf, int i, int n) {
        if (ambiguous) {
            return readings(buf, i, n);
        }
        int p = i;
        for (int k = 0; k < raw.length; k++) {
            while (k > 0) { // sequences between bytes: never before the first or after the last
                if (p >= n) {
                    return -1;
                }
                if (buf[p] == raw[k]) {
                    break; // raw[k] cannot start a sequence: the one reading
                }
                int s = skippable(buf, p, n);
                if (s <= 0) {
                    return s;
                }
                if (shorter(buf, p, s) != s) {
                    return readings(buf, i, n); // an escape sequence, or its ESC alone: two readings
                }
                p += s;
            }
            if (p >= n) {
                return -1;
            }
            if (buf[p] != raw[k]) {
                return 0;
            }
            p++;
        }
        return p - i;
    }

    /**
     * {@return the longest match at {@code i} over every reading of the text, as {@link #match}} A byte of the text
     * that is the secret's next byte and also starts a sequence is read both ways (a {@code ~} of the secret after
     * {@code ~&#125;}, HZ's {@code ~&#125;~~}; an ESC of the secret after {@code ESC ( B}), and a {@code ~} of the
     * secret as {@code ~} and as {@code ~~}: the secret's bytes read so far, for each position, are a set
     * ({@code states}, one bit per count), advanced position by position through a ring of
     * {@value DroppedSequences#MAX_DROPPED} + 1 sets (the longest step), one array. Each position is visited once with all its
     * counts: linear in the bytes read, times the secret's length / 64. -1 only when no reading matched and one was
     * cut off at {@code n}.
     */
    private int readings(byte[] buf, int i, int n) {
        if (buf[i] != raw[0]) {
            return 0;
        }
        int words = (raw.length + 64) / 64; // counts 0..raw.length
        long[] ring = new long[RING * words];
        ring[i % RING * words] = 1L; // nothing read at i
        int best = 0;
        boolean cut = false;
        int live = 1;
        for (int p = i; live > 0; p++) {
            int at = p % RING * words;
            for (int w = 0; w < words; w++) {
                long bits = ring[at + w];
                ring[at + w] = 0;
                while (bits != 0) {
                    int k = w * 64 + Long.numberOfTrailingZeros(bits);
                    bits &= bits - 1;
                    live--;
                    if (k == raw.length) {
                        best = Math.max(best, p - i);
                        continue;
                    }
                    if (p >= n) {
                        cut = true;
                        continue;
                    }
                    int s = skippable(buf, p, n);
                    live += step(buf, p, n, k, s, ring, words);
                    cut |= s < 0 || raw[k] == '~' && buf[p] == '~' && p + 1 >= n; // told by bytes after n
                }
            }
        }
        return best > 0 ? best : cut ? -1 : 0;
    }

    /**
     * Adds the counts that {@code k} bytes read at {@code p}, where a sequence of {@code s} bytes starts, lead to;
     * {@return how many were new}
     */
    private int step(byte[] buf, int p, int n, int k, int s, long[] ring, int words) {
        int added = 0;
        if (buf[p] == raw[k]) {
            added += add(ring, words, p + 1, k + 1);
            if (raw[k] == '~' && p + 1 < n && buf[p + 1] == '~') {
                added += add(ring, words, p + 2, k + 1); // HZ's ~~ for a ~
            }
        }
        if (s > 0 && k > 0) { // sequences only between bytes
            added += add(ring, words, p + s, k);
            int alone = shorter(buf, p, s);
            if (alone != s) {
                added += add(ring, words, p + alone, k); // the ESC alone, as libxml2's HTML parser drops it (P17c-1)
            }
        }
        return added;
    }

    /** Sets count {@code k} at position {@code p}; {@return 1 if it was not set} */
    private static int add(long[] ring, int words, int p, int k) {
        int at = p % RING * words + (k >>> 6);
        long bit = 1L << (k & 63);
        if ((ring[at] & bit) != 0) {
            return 0;
        }
        ring[at] |= bit;
        return 1;
    }

    /**
     * {@return the length of the sequence a decoder drops at {@code p}; 0 for none; -1 if {@code buf} ends first}
     * ({@link DroppedSequences#length}; a byte that cannot start one is answered without wrapping {@code buf})
     */
    static int skippable(byte[] buf, int p, int n) {
        if (!DroppedSequences.mayStart(buf[p]) || p + 1 < n && !DroppedSequences.mayStart(buf[p], buf[p + 1])) {
            return 0; // most bytes, and an & not before # (HTML's &amp;): no buffer wrapped
        }
        return DroppedSequences.length(ByteBuffer.wrap(buf), p, n);
    }

    /** {@return the shorter length a reader drops of the sequence of {@code s} bytes at {@code p}} */
    private static int shorter(byte[] buf, int p, int s) {
        return s > 1 ? DroppedSequences.shorter(ByteBuffer.wrap(buf), p, s) : s;
    }
}
