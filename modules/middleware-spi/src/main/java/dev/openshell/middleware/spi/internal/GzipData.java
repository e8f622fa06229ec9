package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.io.ByteArrayOutputStream;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;
import org.apiguardian.api.API;

/**
 * The one strict reader of gzip data held whole in memory (RFC 1952), for the request chain's {@code Content-Encoding}
 * decoding and the credential scrubber's check of small gzip data without a label: every member's header (FEXTRA,
 * FNAME, FCOMMENT, FHCRC skipped by their lengths), its deflate data (RFC 1951) and its trailer (CRC-32 and ISIZE
 * checked). Not part of the plugin contract.
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
