package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import org.apiguardian.api.API;

/**
 * The one strict reader of gzip data (RFC 1952), for the request chain's {@code Content-Encoding} decoding (streamed:
 * {@link #gunzip(InputStream, OutputStream, long)}, {@link #inflate(InputStream, OutputStream, long, boolean)}, so
 * that neither the encoded nor the decoded body is ever one array) and the credential scrubber's check of small gzip
 * data without a label (held whole): every member's header (FEXTRA, FNAME, FCOMMENT, FHCRC skipped by their lengths),
 * its deflate data (RFC 1951) and its trailer (CRC-32 and ISIZE checked). Both forms accept and refuse the same data.
 * Not part of the plugin contract.
 */
@API(status = INTERNAL, since = "0.2")
public final class GzipData {
    private GzipData() {
    }

    /**
     * The members found from the start of some data.
     *
     * @param decoded the decoded bytes of every member, in order
     * @param end where the last member's trailer ends: the data's length, or where bytes that do not start another
     *     member begin
     */
    @API(status = INTERNAL, since = "0.2")
    public record Members(byte[] decoded, int end) {
    }

    /**
     * {@return the decoded bytes of every member, or {@code null} past {@code cap}}
     *
     * @param data gzip data: one or more whole members and nothing after them
     * @param cap the most decoded bytes accepted
     * @throws DataFormatException if the data is not exactly whole, valid members
     */
    public static byte[] gunzip(byte[] data, long cap) throws DataFormatException {
        Members m = members(data, cap);
        if (m == null) {
            return null;
        }
        if (m.end() != data.length) {
            throw new DataFormatException("bytes after the last gzip member");
        }
        return m.decoded();
    }

    /**
     * Reads members from the start of {@code data} while the next bytes start one (the magic {@code 1f 8b 08}).
     *
     * @param data the data; it must start with a member
     * @param cap the most decoded bytes accepted
     * @return the members and where they end, or {@code null} past {@code cap}
     * @throws DataFormatException if a member is invalid or truncated (its header, deflate data, or trailer)
     */
    public static Members members(byte[] data, long cap) throws DataFormatException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = 0;
        do {
            int start = header(data, at);
            int[] used = new int[1];
            byte[] member = inflate(data, start, data.length - start, cap - out.size(), true, used);
            if (member == null) {
                return null;
            }
            int trailer = start + used[0];
            if (trailer + 8 > data.length) {
                throw new DataFormatException("truncated trailer");
            }
            CRC32 crc = new CRC32();
            crc.update(member);
            if ((int) crc.getValue() != le32(data, trailer) || member.length != le32(data, trailer + 4)) {
                throw new DataFormatException("checksum");
            }
            out.write(member, 0, member.length);
            at = trailer + 8;
        } while (at < data.length && startsMember(data, at));
        return new Members(out.toByteArray(), at);
    }

    /** {@return whether {@code data} holds the gzip magic ({@code 1f 8b 08}) at {@code at}} @param data the data
     * @param at where to look */
    public static boolean startsMember(byte[] data, int at) {
        return at + 3 <= data.length && (data[at] & 0xff) == 0x1f && (data[at + 1] & 0xff) == 0x8b && data[at + 2] == 8;
    }

    /**
     * Inflates one deflate stream from {@code off} (RFC 1950 zlib, or RFC 1951 raw).
     *
     * @param data the data
     * @param off where the stream starts
     * @param len the bytes available from {@code off}
     * @param cap the most decoded bytes accepted
     * @param raw whether the stream is raw deflate (no zlib header)
     * @param consumed if not null, receives the number of input bytes the stream used; if null, bytes left after the
     *     stream are an error
     * @return the bytes, or {@code null} past {@code cap}
     * @throws DataFormatException if the stream is invalid or truncated
     */
    public static byte[] inflate(byte[] data, int off, int len, long cap, boolean raw, int[] consumed)
            throws DataFormatException {
        Inflater inf = new Inflater(raw);
        try {
            inf.setInput(data, off, len);
            ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(len * 4 + 64, 1 << 20));
            byte[] buf = new byte[16 * 1024];
            while (!inf.finished()) {
                int n = inf.inflate(buf);
                if (n == 0 && (inf.needsInput() || inf.needsDictionary())) {
                    throw new DataFormatException("truncated");
                }
                if (out.size() + (long) n > cap) {
                    return null;
                }
                out.write(buf, 0, n);
            }
            if (consumed != null) {
                consumed[0] = len - inf.getRemaining();
            } else if (inf.getRemaining() != 0) {
                throw new DataFormatException("trailing bytes");
            }
            return out.toByteArray();
        } finally {
            inf.end();
        }
    }

    /**
     * Decodes gzip data read from {@code in} to its end, writing the decoded bytes of every member to {@code out} as
     * they come: the same data accepted and refused as {@link #gunzip(byte[], long)}, none of it held whole.
     *
     * @param in gzip data: one or more whole members and nothing after them
     * @param out receives the decoded bytes (some may be written before a failure or the cap)
     * @param cap the most decoded bytes accepted
     * @return {@code false} past {@code cap}
     * @throws DataFormatException if the data is not exactly whole, valid members
     * @throws IOException if reading or writing fails
     */
    public static boolean gunzip(InputStream in, OutputStream out, long cap) throws IOException, DataFormatException {
        Source src = new Source(in);
        long total = 0;
        do {
            src.skipHeader();
            CRC32 crc = new CRC32();
            long n = inflate(src, out, cap - total, true, crc);
            if (n < 0) {
                return false;
            }
            byte[] trailer = src.take(8, "truncated trailer");
            if ((int) crc.getValue() != le32(trailer, 0) || (int) n != le32(trailer, 4)) {
                throw new DataFormatException("checksum");
            }
            total += n;
        } while (src.anotherMember());
        return true;
    }

    /**
     * Inflates one deflate stream (RFC 1950 zlib, or RFC 1951 raw) read from {@code in}, which must end with it, to
     * {@code out}: the same data accepted and refused as {@code inflate(data, 0, data.length, cap, raw, null)}.
     *
     * @param in the stream's data and nothing after it
     * @param out receives the inflated bytes (some may be written before a failure or the cap)
     * @param cap the most decoded bytes accepted
     * @param raw whether the stream is raw deflate (no zlib header)
     * @return {@code false} past {@code cap}
     * @throws DataFormatException if the stream is invalid, truncated or followed by more bytes
     * @throws IOException if reading or writing fails
     */
    public static boolean inflate(InputStream in, OutputStream out, long cap, boolean raw)
            throws IOException, DataFormatException {
        Source src = new Source(in);
        if (inflate(src, out, cap, raw, null) < 0) {
            return false;
        }
        if (src.fill()) {
            throw new DataFormatException("trailing bytes");
        }
        return true;
    }

    /** {@return the bytes inflated from {@code src} into {@code out}, or -1 past {@code cap}} */
    private static long inflate(Source src, OutputStream out, long cap, boolean raw, CRC32 crc)
            throws IOException, DataFormatException {
        Inflater inf = new Inflater(raw);
        try {
            byte[] buf = new byte[16 * 1024];
            long total = 0;
            while (!inf.finished()) {
                int n = inf.inflate(buf);
                if (n == 0 && inf.needsDictionary()) {
                    throw new DataFormatException("truncated");
                }
                if (n == 0 && inf.needsInput()) {
                    // more input only once the output pending for what it has is drained
                    if (!src.fill()) {
                        throw new DataFormatException("truncated");
                    }
                    inf.setInput(src.buf, src.pos, src.limit - src.pos);
                    src.pos = src.limit;
                    continue;
                }
                if (total + n > cap) {
                    return -1;
                }
                if (crc != null) {
                    crc.update(buf, 0, n);
                }
                out.write(buf, 0, n);
                total += n;
            }
            src.pos = src.limit - inf.getRemaining(); // the bytes after the stream, given back
            return total;
        } finally {
            inf.end();
        }
    }

    /** Buffered input with the look-ahead the member framing needs. */
    private static final class Source {
        private final InputStream in;
        final byte[] buf = new byte[16 * 1024];
        int pos;
        int limit;

        Source(InputStream in) {
            this.in = in;
        }

        /** {@return whether a byte is buffered, reading more when none is} */
        boolean fill() throws IOException {
            if (pos < limit) {
                return true;
            }
            int n = in.read(buf, 0, buf.length);
            if (n <= 0) {
                return false;
            }
            pos = 0;
            limit = n;
            return true;
        }

        int next(String truncated) throws IOException, DataFormatException {
            if (!fill()) {
                throw new DataFormatException(truncated);
            }
            return buf[pos++] & 0xff;
        }

        byte[] take(int n, String truncated) throws IOException, DataFormatException {
            byte[] out = new byte[n];
            for (int i = 0; i < n; i++) {
                out[i] = (byte) next(truncated);
            }
            return out;
        }

        /** Reads a member's header up to its deflate data, as {@link GzipData#header} does. */
        void skipHeader() throws IOException, DataFormatException {
            byte[] fixed = take(10, "not gzip");
            if (!startsMember(fixed, 0)) {
                throw new DataFormatException("not gzip");
            }
            int flags = fixed[3] & 0xff;
            if ((flags & 4) != 0) { // FEXTRA
                byte[] len = take(2, "truncated");
                take((len[0] & 0xff) | (len[1] & 0xff) << 8, "truncated");
            }
            for (int bit : new int[] {8, 16}) { // FNAME, FCOMMENT: zero-terminated
                if ((flags & bit) != 0) {
                    while (next("truncated") != 0) {
                        // skipped
                    }
                }
            }
            if ((flags & 2) != 0) { // FHCRC
                take(2, "truncated");
            }
        }

        /**
         * {@return whether another member follows; {@code false} at the end of the data}
         *
         * @throws DataFormatException if bytes follow that do not start a member
         */
        boolean anotherMember() throws IOException, DataFormatException {
            if (!fill()) {
                return false;
            }
            if (limit - pos < 3) {
                // the magic may straddle a read: keep what is buffered at the front and read on
                System.arraycopy(buf, pos, buf, 0, limit - pos);
                limit -= pos;
                pos = 0;
                while (limit < 3) {
                    int n = in.read(buf, limit, buf.length - limit);
                    if (n <= 0) {
                        break;
                    }
                    limit += n;
                }
            }
            if (limit - pos < 3 || (buf[pos] & 0xff) != 0x1f || (buf[pos + 1] & 0xff) != 0x8b || buf[pos + 2] != 8) {
                throw new DataFormatException("bytes after the last gzip member");
            }
            return true;
        }
    }

    /** {@return where the deflate data of the gzip member at {@code at} starts} */
    private static int header(byte[] d, int at) throws DataFormatException {
        if (at + 10 > d.length || !startsMember(d, at)) {
            throw new DataFormatException("not gzip");
        }
        int flags = d[at + 3] & 0xff;
        int i = at + 10;
        if ((flags & 4) != 0) { // FEXTRA
            if (i + 2 > d.length) {
                throw new DataFormatException("truncated");
            }
            i += 2 + ((d[i] & 0xff) | (d[i + 1] & 0xff) << 8);
        }
        for (int bit : new int[] {8, 16}) { // FNAME, FCOMMENT: zero-terminated
            if ((flags & bit) != 0) {
                while (i < d.length && d[i] != 0) {
                    i++;
                }
                i++;
            }
        }
        if ((flags & 2) != 0) { // FHCRC
            i += 2;
        }
        if (i > d.length) {
            throw new DataFormatException("truncated");
        }
        return i;
    }

    private static int le32(byte[] d, int i) {
        return (d[i] & 0xff) | (d[i + 1] & 0xff) << 8 | (d[i + 2] & 0xff) << 16 | (d[i + 3] & 0xff) << 24;
    }
}
