package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Two readings of the same content, both scanned. Text that is not a JSON document but holds JSON string escapes is
 * read as it is and with its escapes decoded ({@link BodyDecoder}; code unit 1). And content whose charset is not
 * ASCII-compatible (UTF-16 or UTF-32, declared or shown by a byte
 * order mark): the text in that charset, and the bytes read as an ASCII-compatible reader reads them (every byte below
 * 0x80 is that ASCII character), through the same media-type layer ({@link BodyDecoder#content}). Many readers ignore
 * a declared charset, so a key written in ASCII bytes under {@code charset=utf-16le} is read by them, while its
 * UTF-16 reading is CJK characters; and the reverse. Both readings are scanned, so a secret visible in either is
 * found.
 *
 * <p>The text is the charset reading, a NUL byte (which no pattern matches or crosses) and the byte reading. The way
 * back maps the edits of each part through its own view. An edit of the byte reading replaces bytes one for one, so
 * its replacement is padded with {@code _} to keep the content's length modulo the code unit (2 or 4): the charset
 * reading of every byte after it stays aligned as it was. Edits of the two readings that overlap become one edit over
 * both ranges. What the charset reading makes of a byte-reading replacement is not a secret (pairs of ASCII bytes
 * are characters above U+0100), and {@link RegexProvider} decodes and scans a redacted body with two readings again,
 * so a redaction that still shows a secret in either reading, or that cannot be read, fails the stage.
 */
final class TwoReadings extends TextView {
    private final TextView charset;
    private final TextView bytes;
    private final int unit;
    /** The length of {@link #text}: both readings and the NUL between them. */
    private final int length;
    /** Made on first use, once for a whole chain of readings ({@link #copyTo}); {@code null} until then. */
    private ByteBuffer text;

    /**
     * @param charset the reading in the content's charset
     * @param bytes the ASCII-compatible reading of the same input bytes
     * @param unit the charset's code unit in bytes (2 or 4), or 1 for the escaped reading
     */
    TwoReadings(TextView charset, TextView bytes, int unit) {
        this.charset = charset;
        this.bytes = bytes;
        this.unit = unit;
        this.length = Math.addExact(Math.addExact(length(charset), 1), length(bytes));
    }

    /**
     * {@inheritDoc} Made once: a body read in many ways is a chain of these, each joining the chain so far and one
     * more reading; copying the chain at every link cost the square of the readings (a 4 MB body read 11 ways
     * allocated 170 MB).
     */
    @Override
    ByteBuffer text() {
        if (text == null) {
            byte[] t = new byte[length];
            copyTo(t, 0);
            text = ByteBuffer.wrap(t);
        }
        return text;
    }

    private static int length(TextView v) {
        return v instanceof TwoReadings r ? r.length : v.text().limit();
    }

    /** Copies this text to {@code t} at {@code at}, the readings of a chain not yet made copied straight in. */
    private void copyTo(byte[] t, int at) {
        put(charset, t, at);
        put(bytes, t, at + length(charset) + 1); // the NUL between them is the array's zero
    }

    private static void put(TextView v, byte[] t, int at) {
        if (v instanceof TwoReadings r && r.text == null) {
            r.copyTo(t, at);
        } else {
            ByteBuffer b = v.text();
            b.get(0, t, at, b.limit());
        }
    }

    @Override
    boolean twoReadings() {
        return true;
    }

    @Override
    List<Edit> toInput(List<Edit> edits) {
        int split = length(charset);
        List<Edit> first = new ArrayList<>();
        List<Edit> second = new ArrayList<>();
        for (Edit e : edits) {
            if (e.start() < split) {
                first.add(new Edit(e.start(), Math.min(e.end(), split), e.replacement()));
            } else {
                second.add(new Edit(e.start() - split - 1, e.end() - split - 1, e.replacement()));
            }
        }
        List<Edit> all = new ArrayList<>(charset.toInput(first));
        for (Edit e : bytes.toInput(second)) {
            all.add(new Edit(e.start(), e.end(), padded(e.replacement(), e.end() - e.start())));
        }
        all.sort(Comparator.comparingInt(Edit::start));
        return merged(all);
    }

    /** {@return {@code r} padded with {@code _} so that it differs from {@code replaced} bytes by whole units} */
    private byte[] padded(byte[] r, int replaced) {
        int pad = Math.floorMod(replaced - r.length, unit);
        if (pad == 0) {
            return r;
        }
        byte[] out = java.util.Arrays.copyOf(r, r.length + pad);
        java.util.Arrays.fill(out, r.length, out.length, (byte) '_');
        return out;
    }

    /**
     * {@return the edits, sorted by start, with overlapping ones joined: the replacement of the one that covers the
     * other (it is written for that whole range: a markup edit that ends outside a CDATA section it started in
     * closes the section), else the first one's; padded}
     */
    private List<Edit> merged(List<Edit> sorted) {
        List<Edit> out = new ArrayList<>(sorted.size());
        for (Edit e : sorted) {
            Edit last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && e.start() < last.end()) {
                int end = Math.max(last.end(), e.end());
                byte[] r = e.start() == last.start() && e.end() > last.end() ? e.replacement() : last.replacement();
                out.set(out.size() - 1, new Edit(last.start(), end, padded(r, end - last.start())));
            } else {
                out.add(e);
            }
        }
        return out;
    }
}
