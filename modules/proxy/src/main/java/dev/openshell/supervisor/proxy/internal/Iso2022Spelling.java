package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Iso2022Sequences;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * A secret as a stateful-encoding decoder (ISO-2022-JP/-KR/-CN, HZ) may read it: its UTF-8 bytes with, between any
 * two of them, sequences that such a decoder drops from the text (attacker pass 8, P10-4: {@code k ESC ( B 9Q7z...}
 * in a body without a declared charset, which a client sniffing the charset reads as the key). Which sequences those
 * are has one home, {@link Iso2022Sequences} (shared with the {@code openshell/regex} body reading):
 * <ul>
 *   <li>an ECMA-35 / ISO 2022 escape sequence: ESC (0x1B), one to {@value #MAX_INTERMEDIATES} intermediate bytes
 *       0x20-0x2F, one final byte 0x30-0x7E (designations such as {@code ESC ( B}, {@code ESC $ B},
 *       {@code ESC $ ) C}, {@code ESC & @}); the single shifts {@code ESC N} / {@code ESC O} are not skipped, they
 *       change the next character;</li>
 *   <li>SO (0x0E) and SI (0x0F), the ISO-2022-KR shifts;</li>
 *   <li>the HZ shifts <code>~&#123;</code> and <code>~&#125;</code> and the HZ line continuation {@code ~} LF
 *       (RFC 1843); a {@code ~} of the secret may be spelled {@code ~~}.</li>
 * </ul>
 * Runs of them are skipped too, any number of them in one match: what bounds a streamed match is not the secret but the
 * held-back window of {@link SecretScrubber.Scrubbing}, counted in bytes that are not such sequences
 * ({@link VisibleWindow}), whatever the text spells (attacker pass 9, P11-11: a cut taken only where a start of the
 * secret was followed by more sequences than a bound told the sandbox, a character at a time, whether its reflected
 * text was a prefix of the secret). {@link #maxSkipped()} ({@value #PER_BYTE} per byte) only sizes that window, as
 * the longest spelling it was sized for before (for a 32-byte secret 385 bytes). Skipping is a superset
 * of what a decoder drops (a span shifted into a double-byte set is not the secret when decoded): over-replacing
 * such a span by the placeholder is harmless. A literal byte of the secret is preferred to reading it as the start of a
 * sequence, so a secret holding {@code ~}, ESC, SO or SI is found literally, and in mixes only where that reading fits.
 */
final class Iso2022Spelling implements Spelling {
    /** Inserted sequences allowed per byte of the secret. */
    static final int PER_BYTE = 2;
    /** The most intermediate bytes of an escape sequence ({@link Iso2022Sequences#MAX_INTERMEDIATES}). */
    static final int MAX_INTERMEDIATES = Iso2022Sequences.MAX_INTERMEDIATES;
    /** The longest skipped sequence: ESC, the intermediates, the final byte. */
    static final int MAX_SEQUENCE = Iso2022Sequences.MAX_SEQUENCE;

    private final byte[] raw;

    /** @param secret the secret value; not empty */
    Iso2022Spelling(String secret) {
        raw = secret.getBytes(StandardCharsets.UTF_8);
    }

    /** {@return the most sequences skipped in one match} */
    int maxSkipped() {
        return PER_BYTE * raw.length;
    }

    @Override
    public int longest() {
        return 2 * raw.length + maxSkipped() * MAX_SEQUENCE + 1; // 2: a ~ spelled ~~; 1: one byte of look-ahead
    }

    @Override
    public void starts(Pairs pairs) {
        int b0 = raw[0] & 0xff;
        if (raw.length == 1) {
            pairs.pair(b0, -1);
            return;
        }
        pairs.pair(b0, raw[1] & 0xff);
        for (int b1 : Iso2022Sequences.startBytes()) {
            pairs.pair(b0, b1);
        }
    }

    /**
     * {@inheritDoc} Any number of sequences is skipped: a match is decided by the bytes up to {@code n}, and a
     * streamed text holds enough bytes that are not sequences after each position it scans ({@link VisibleWindow}).
     */
    @Override
    public int match(byte[] buf, int i, int n) {
        int p = i;
        for (int k = 0; k < raw.length; k++) {
            while (k > 0) { // sequences between bytes: never before the first or after the last
                if (p >= n) {
                    return -1;
                }
                if (buf[p] == raw[k]) {
                    break;
                }
                int s = skippable(buf, p, n);
                if (s <= 0) {
                    return s;
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
            if (raw[k] == '~' && p < n && buf[p] == '~' && (k + 1 == raw.length || raw[k + 1] != '~')) {
                p++; // HZ's ~~ for a ~
            }
        }
        return p - i;
    }

    /**
     * {@return the length of the sequence a decoder drops at {@code p}; 0 for none; -1 if {@code buf} ends first}
     * ({@link Iso2022Sequences#length}; a byte that cannot start one is answered without wrapping {@code buf})
     */
    static int skippable(byte[] buf, int p, int n) {
        return Iso2022Sequences.mayStart(buf[p]) ? Iso2022Sequences.length(ByteBuffer.wrap(buf), p, n) : 0;
    }
}
