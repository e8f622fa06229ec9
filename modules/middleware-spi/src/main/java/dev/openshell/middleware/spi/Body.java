package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.INTERNAL;
import static org.apiguardian.api.API.Status.STABLE;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.Reader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apiguardian.api.API;

/**
 * An immutable, bounded request body: at most {@link EnvelopeLimits#MAX_BODY_BYTES} (4 MiB) bytes
 * (RFC 0009, "The middleware contract": "bounded body").
 *
 * <p>The bytes are copied in and never handed out unprotected: {@link #toByteArray()} copies,
 * {@link #segments()}, {@link #newInputStream()} and {@link #writeTo} share without copying.
 *
 * <h2>Segments</h2>
 * A body the host reads from the network ({@link #read}, {@link #sink}) of more than 1 MiB is held in segments of
 * at most {@value #SEGMENT_BYTES} bytes, so that no buffered body is one large array: under G1 an array of half a
 * heap region or more is a <em>humongous</em> object that takes whole regions, so a 4 MiB array costs 5 MiB of heap
 * or more, and the proxy's body buffer budget would under-count it. A body of up to 1 MiB is held in one array: a
 * quarter of the 4 MiB regions the supervisor's launcher gives G1, so never humongous there, and contiguous for the
 * stages that read it so (a text scanner), which then take {@link #asReadOnlyBuffer()} without a copy.
 * {@link #heapBytes()} is what a body's arrays take on the heap. A body built from one array ({@link #of},
 * {@link #ofOwned}, {@link #ofUtf8}) keeps that array.
 * {@link #asReadOnlyBuffer()} is contiguous: for a body of more than one segment it is a fresh copy each call (the
 * only accessor besides {@link #toByteArray()} that copies); stages that can work segment by segment should use
 * {@link #segments()} or {@link #newInputStream()}.
 */
@API(status = STABLE, since = "0.1")
public final class Body {
    /** The size of each segment of a body read from the network, in bytes (64 KiB). */
    public static final int SEGMENT_BYTES = 64 * 1024;
    /**
     * The largest body the host holds in one array when it reads it ({@link #read}, {@link #sink}), in bytes (1 MiB):
     * a quarter of the supervisor's 4 MiB G1 region, so never humongous; larger bodies are segmented.
     */
    static final int ONE_ARRAY_BYTES = 16 * SEGMENT_BYTES;
    /** Object header plus length field of an array on a 64-bit JVM with compressed class pointers, in bytes. */
    private static final int ARRAY_HEADER_BYTES = 16;
    private static final byte[][] NO_SEGMENTS = new byte[0][];
    private static final Body EMPTY = new Body(NO_SEGMENTS, 0);

    /** The bytes, in order; every segment but the last is full (as long as the first). Never changed. */
    private final byte[][] segments;
    private final int size;

    private Body(byte[][] segments, int size) {
        this.segments = segments;
        this.size = size;
    }

    /** {@return the empty body} */
    @API(status = STABLE, since = "0.1")
    public static Body empty() {
        return EMPTY;
    }

    /**
     * {@return a body holding a copy of {@code bytes}}
     *
     * @param bytes the content; never {@code null}
     * @throws IllegalArgumentException if longer than {@link EnvelopeLimits#MAX_BODY_BYTES}
     */
    @API(status = STABLE, since = "0.1")
    public static Body of(byte[] bytes) {
        return ofOwned(bytes.clone());
    }

    /**
     * {@return a body holding {@code text} encoded as UTF-8}
     *
     * @param text the content; never {@code null}
     * @throws IllegalArgumentException if the encoding is longer than {@link EnvelopeLimits#MAX_BODY_BYTES}
     */
    @API(status = STABLE, since = "0.1")
    public static Body ofUtf8(String text) {
        return ofOwned(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Wraps an array without copying; the caller gives up the array and must never change it again.
     * Only for the host and for providers that have just built {@code bytes} themselves.
     *
     * @param bytes the content, owned by the new body from now on
     * @return the body
     * @throws IllegalArgumentException if longer than {@link EnvelopeLimits#MAX_BODY_BYTES}
     */
    @API(status = STABLE, since = "0.1")
    public static Body ofOwned(byte[] bytes) {
        checkSize(bytes.length);
        return bytes.length == 0 ? EMPTY : new Body(new byte[][] {bytes}, bytes.length);
    }

    /**
     * Reads exactly {@code length} bytes into a body: one array up to 1 MiB, segments beyond.
     *
     * @param in the stream
     * @param length the number of bytes, 0 to {@link EnvelopeLimits#MAX_BODY_BYTES}
     * @return the body
     * @throws EOFException if the stream ends first
     * @throws IOException if reading fails
     * @throws IllegalArgumentException if {@code length} is out of range
     */
    @API(status = INTERNAL, since = "0.1")
    public static Body read(InputStream in, int length) throws IOException {
        checkSize(length);
        if (length < 0) {
            throw new IllegalArgumentException("negative body length");
        }
        if (length == 0) {
            return EMPTY;
        }
        if (length <= ONE_ARRAY_BYTES) {
            byte[] one = new byte[length];
            if (in.readNBytes(one, 0, length) < length) {
                throw new EOFException("stream ended inside a message body");
            }
            return new Body(new byte[][] {one}, length);
        }
        byte[][] segs = new byte[(length + SEGMENT_BYTES - 1) / SEGMENT_BYTES][];
        int left = length;
        for (int i = 0; i < segs.length; i++) {
            byte[] s = new byte[Math.min(SEGMENT_BYTES, left)];
            int n = in.readNBytes(s, 0, s.length);
            if (n < s.length) {
                throw new EOFException("stream ended inside a message body");
            }
            segs[i] = s;
            left -= s.length;
        }
        return new Body(segs, length);
    }

    /** {@return a stream that collects written bytes into a segmented body (see {@link Sink#toBody()})} */
    @API(status = INTERNAL, since = "0.1")
    public static Sink sink() {
        return new Sink();
    }

    /**
     * {@return the heap, in bytes, that the arrays of a body of {@code size} bytes read with {@link #read} or a
     * {@link Sink} take: its one array or its segments, and the array that lists them, each with its header, rounded
     * up to 8 bytes}
     *
     * @param size the body size, in bytes; at least 0
     */
    @API(status = INTERNAL, since = "0.1")
    public static long heapBytes(long size) {
        if (size <= 0) {
            return 0;
        }
        if (size <= ONE_ARRAY_BYTES) {
            return align(ARRAY_HEADER_BYTES + size) + align(ARRAY_HEADER_BYTES + 4);
        }
        long full = size / SEGMENT_BYTES;
        long rest = size % SEGMENT_BYTES;
        long count = full + (rest == 0 ? 0 : 1);
        return full * align(ARRAY_HEADER_BYTES + SEGMENT_BYTES) + (rest == 0 ? 0 : align(ARRAY_HEADER_BYTES + rest))
                + align(ARRAY_HEADER_BYTES + 4 * count);
    }

    private static long align(long bytes) {
        return (bytes + 7) & ~7L;
    }

    private static void checkSize(long length) {
        if (length > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new IllegalArgumentException("body of %d bytes exceeds the %d-byte platform maximum"
                    .formatted(length, EnvelopeLimits.MAX_BODY_BYTES));
        }
    }

    /** {@return the size in bytes} */
    public int size() {
        return size;
    }

    /** {@return whether the body has no bytes} */
    public boolean isEmpty() {
        return size == 0;
    }

    /**
     * {@return the heap this body's arrays take, in bytes (0 for the empty body): the same as {@link #heapBytes(long)}
     * for a segmented body; for a body built from one array, that array and the one-element array that holds it (a
     * large one-array body may take more under G1, as a humongous object)}
     */
    @API(status = INTERNAL, since = "0.1")
    public long heapBytes() {
        if (size == 0) {
            return 0;
        }
        long total = align(ARRAY_HEADER_BYTES + 4L * segments.length);
        for (byte[] s : segments) {
            total += align(ARRAY_HEADER_BYTES + s.length);
        }
        return total;
    }

    /** {@return a copy of the bytes} */
    public byte[] toByteArray() {
        if (segments.length == 1) {
            return segments[0].clone();
        }
        byte[] out = new byte[size];
        int at = 0;
        for (byte[] s : segments) {
            System.arraycopy(s, 0, out, at, s.length);
            at += s.length;
        }
        return out;
    }

    /**
     * {@return a read-only view of the bytes, positioned at 0}: shared without copying for a body of one segment, a
     * fresh contiguous copy otherwise
     */
    public ByteBuffer asReadOnlyBuffer() {
        return ByteBuffer.wrap(segments.length == 1 ? segments[0] : toByteArray()).asReadOnlyBuffer();
    }

    /** {@return read-only views of the body's segments, in order, each positioned at 0; shared without copying} */
    public List<ByteBuffer> segments() {
        List<ByteBuffer> out = new ArrayList<>(segments.length);
        for (byte[] s : segments) {
            out.add(ByteBuffer.wrap(s).asReadOnlyBuffer());
        }
        return List.copyOf(out);
    }

    /**
     * Writes the bytes to {@code out}, segment by segment, without copying them first.
     *
     * @param out the stream
     * @throws IOException if writing fails
     */
    public void writeTo(OutputStream out) throws IOException {
        for (byte[] s : segments) {
            out.write(s, 0, s.length);
        }
    }

    /** {@return a stream over the bytes} */
    public InputStream newInputStream() {
        return new SegmentStream(segments);
    }

    /**
     * Decodes strictly as UTF-8.
     *
     * @return the text, or empty when the bytes are not well-formed UTF-8 (never replaced silently)
     */
    public Optional<String> utf8() {
        try {
            if (segments.length <= 1) {
                return Optional.of(StandardCharsets.UTF_8.newDecoder()
                        .onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(ByteBuffer.wrap(segments.length == 0 ? new byte[0] : segments[0])).toString());
            }
            // a code point may span two segments: a streaming decoder carries it over
            StringBuilder text = new StringBuilder(size);
            try (Reader r = new InputStreamReader(newInputStream(), StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT))) {
                char[] buf = new char[8192];
                for (int n; (n = r.read(buf)) >= 0; ) {
                    text.append(buf, 0, n);
                }
            }
            return Optional.of(text.toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        } catch (IOException e) {
            return Optional.empty(); // a malformed sequence the reader reports as an I/O error; memory reads never fail
        }
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof Body other) || other.size != size) {
            return false;
        }
        if (segments.length == 1 && other.segments.length == 1) {
            return Arrays.equals(segments[0], other.segments[0]);
        }
        int i = 0;
        int j = 0;
        int at = 0;
        int otherAt = 0;
        while (i < segments.length) {
            byte[] a = segments[i];
            byte[] b = other.segments[j];
            int n = Math.min(a.length - at, b.length - otherAt);
            if (Arrays.mismatch(a, at, at + n, b, otherAt, otherAt + n) >= 0) {
                return false;
            }
            at += n;
            otherAt += n;
            if (at == a.length) {
                i++;
                at = 0;
            }
            if (otherAt == b.length) {
                j++;
                otherAt = 0;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (byte[] s : segments) {
            for (byte b : s) {
                h = 31 * h + b;
            }
        }
        return h; // Arrays.hashCode of the bytes as one array
    }

    /** {@return a summary with the size only: body content never appears in logs} */
    @Override
    public String toString() {
        return "Body[" + size + " bytes]";
    }

    /**
     * Collects written bytes into {@value #SEGMENT_BYTES}-byte segments (the host's buffer for a body of unknown
     * length, such as a chunked one), joined into one array by {@link #toBody()} when they hold 1 MiB or less. Not
     * thread-safe; {@link #toBody()} ends it.
     */
    @API(status = INTERNAL, since = "0.1")
    public static final class Sink extends OutputStream {
        private final List<byte[]> full = new ArrayList<>();
        private byte[] current = new byte[0];
        private int fill;
        private long size;
        private boolean done;

        private Sink() {
        }

        /** {@return the bytes written so far} */
        public long size() {
            return size;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        /**
         * @throws IllegalArgumentException if the body would exceed {@link EnvelopeLimits#MAX_BODY_BYTES}
         * @throws IllegalStateException after {@link #toBody()}
         */
        @Override
        public void write(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            if (done) {
                throw new IllegalStateException("the body was already built");
            }
            checkSize(size + len);
            size += len;
            while (len > 0) {
                if (fill == current.length) {
                    if (current.length < SEGMENT_BYTES) {
                        // only the first segment is ever short: it grows by doubling, so small bodies stay small
                        current = Arrays.copyOf(current, (int) Math.min(SEGMENT_BYTES,
                                Math.max(256, Math.max(2L * current.length, (long) fill + len))));
                    } else {
                        full.add(current);
                        current = new byte[SEGMENT_BYTES];
                        fill = 0;
                    }
                }
                int n = Math.min(len, current.length - fill);
                System.arraycopy(b, off, current, fill, n);
                fill += n;
                off += n;
                len -= n;
            }
        }

        /**
         * {@return the body of every byte written: in one array up to 1 MiB (the segments joined once, here), else
         * in segments, the last one trimmed to its bytes}
         */
        public Body toBody() {
            done = true;
            if (size == 0) {
                return EMPTY;
            }
            if (size <= ONE_ARRAY_BYTES) {
                if (full.isEmpty() && fill == current.length) {
                    return new Body(new byte[][] {current}, (int) size);
                }
                byte[] one = new byte[(int) size];
                int at = 0;
                for (byte[] f : full) {
                    System.arraycopy(f, 0, one, at, f.length);
                    at += f.length;
                }
                System.arraycopy(current, 0, one, at, fill);
                return new Body(new byte[][] {one}, (int) size);
            }
            byte[][] segs = new byte[full.size() + (fill > 0 ? 1 : 0)][];
            for (int i = 0; i < full.size(); i++) {
                segs[i] = full.get(i);
            }
            if (fill > 0) {
                segs[full.size()] = fill == current.length ? current : Arrays.copyOf(current, fill);
            }
            return new Body(segs, (int) size);
        }
    }

    /** An input stream over segments. */
    private static final class SegmentStream extends InputStream {
        private final byte[][] segments;
        private int index;
        private int at;
        private int mark;
        private int markAt;

        SegmentStream(byte[][] segments) {
            this.segments = segments;
        }

        @Override
        public int read() {
            while (index < segments.length) {
                if (at < segments[index].length) {
                    return segments[index][at++] & 0xff;
                }
                index++;
                at = 0;
            }
            return -1;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            int copied = 0;
            while (copied < len && index < segments.length) {
                byte[] s = segments[index];
                int n = Math.min(len - copied, s.length - at);
                System.arraycopy(s, at, b, off + copied, n);
                copied += n;
                at += n;
                if (at == s.length) {
                    index++;
                    at = 0;
                }
            }
            return copied == 0 ? -1 : copied;
        }

        @Override
        public int available() {
            long left = 0;
            for (int i = index; i < segments.length; i++) {
                left += segments[i].length;
            }
            return (int) Math.min(Integer.MAX_VALUE, left - at);
        }

        @Override
        public long transferTo(OutputStream out) throws IOException {
            long n = 0;
            while (index < segments.length) {
                byte[] s = segments[index];
                out.write(s, at, s.length - at);
                n += s.length - at;
                index++;
                at = 0;
            }
            return n;
        }

        @Override
        public boolean markSupported() {
            return true;
        }

        @Override
        public void mark(int readLimit) {
            mark = index;
            markAt = at;
        }

        @Override
        public void reset() {
            index = mark;
            at = markAt;
        }
    }
}
