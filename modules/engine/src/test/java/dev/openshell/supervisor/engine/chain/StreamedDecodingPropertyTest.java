package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.internal.GzipData;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The streamed decoding of a request body's {@code Content-Encoding} (from the body's segments into a segmented body,
 * issue 41 item 4) accepts, refuses and caps exactly the data the whole-array reader ({@link GzipData#gunzip(byte[],
 * long)}, {@link GzipData#inflate(byte[], int, int, long, boolean, int[])}) does, and decodes it to the same bytes:
 * over gzip of one to three members with every header field, zlib and raw deflate, cut short, with a byte changed or
 * with bytes after the data, and caps on both sides of the decoded size.
 */
class StreamedDecodingPropertyTest {
    /** What the whole-array reader makes of some data: the decoded bytes, "cap", or "invalid". */
    private static Object wholeArray(byte[] data, String coding, long cap) {
        try {
            byte[] out;
            if (coding.equals("gzip")) {
                out = GzipData.gunzip(data, cap);
            } else {
                try {
                    out = GzipData.inflate(data, 0, data.length, cap, false, null);
                } catch (DataFormatException zlibFailed) {
                    out = GzipData.inflate(data, 0, data.length, cap, true, null);
                }
            }
            return out == null ? "cap" : out;
        } catch (DataFormatException e) {
            return "invalid";
        }
    }

    private static Object streamed(byte[] data, String coding, long cap) {
        ContentDecoding.Outcome o = ContentDecoding.decode(Body.of(data), List.of(coding), cap);
        return switch (o) {
            case ContentDecoding.Outcome.Decoded d -> d.body().toByteArray();
            case ContentDecoding.Outcome.Failed f -> f.code().equals(PlatformCodes.DECODED_BODY_OVER_CAPACITY) ? "cap"
                    : "invalid";
        };
    }

    private static void sameOutcome(byte[] data, String coding, long cap) {
        // the ratio bound of ContentDecoding applies on top of the cap
        long ratioCap = (long) data.length * ContentDecoding.MAX_RATIO + ContentDecoding.RATIO_SLACK;
        Object expected = wholeArray(data, coding, Math.min(cap, ratioCap));
        Object actual = streamed(data, coding, cap);
        if (expected instanceof byte[] e) {
            assertTrue(actual instanceof byte[], "decoded whole, streamed: " + actual);
            assertArrayEquals(e, (byte[]) actual);
        } else {
            assertEquals(expected, actual);
        }
    }

    private static byte[] payload(int size, boolean text, Random r) {
        if (!text) {
            byte[] b = new byte[size];
            r.nextBytes(b);
            return b;
        }
        StringBuilder s = new StringBuilder(size + 16);
        while (s.length() < size) {
            s.append("lorem ipsum ").append(r.nextInt(1000)).append(' ');
        }
        return s.substring(0, size).getBytes(StandardCharsets.US_ASCII);
    }

    /** One gzip member with the header fields chosen by {@code flags} (FHCRC 2, FEXTRA 4, FNAME 8, FCOMMENT 16). */
    private static void member(ByteArrayOutputStream out, byte[] content, int flags, Random r) throws IOException {
        out.write(new byte[] {0x1f, (byte) 0x8b, 8, (byte) flags, 0, 0, 0, 0, 0, (byte) 255});
        if ((flags & 4) != 0) {
            int n = r.nextInt(40);
            out.write(n);
            out.write(0);
            out.write(payload(n, false, r));
        }
        for (int bit : new int[] {8, 16}) {
            if ((flags & bit) != 0) {
                out.write(payload(r.nextInt(30), true, r));
                out.write(0);
            }
        }
        if ((flags & 2) != 0) {
            out.write(new byte[] {1, 2});
        }
        out.write(deflate(content, true));
        CRC32 crc = new CRC32();
        crc.update(content);
        int c = (int) crc.getValue();
        out.write(new byte[] {(byte) c, (byte) (c >> 8), (byte) (c >> 16), (byte) (c >> 24), (byte) content.length,
            (byte) (content.length >> 8), (byte) (content.length >> 16), (byte) (content.length >> 24)});
    }

    private static byte[] deflate(byte[] b, boolean raw) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DeflaterOutputStream z = new DeflaterOutputStream(out, new Deflater(Deflater.DEFAULT_COMPRESSION, raw))) {
            z.write(b);
        }
        return out.toByteArray();
    }

    /** Cut short, a byte changed, or bytes appended, by {@code how} (0: none). */
    private static byte[] damage(byte[] data, int how, Random r) {
        if (data.length == 0 || how == 0) {
            return data;
        }
        return switch (how) {
            case 1 -> java.util.Arrays.copyOf(data, r.nextInt(data.length));
            case 2 -> {
                byte[] d = data.clone();
                d[r.nextInt(d.length)] ^= (byte) (1 + r.nextInt(255));
                yield d;
            }
            default -> {
                byte[] tail = how == 3 ? new byte[] {0x1f, (byte) 0x8b} : payload(1 + r.nextInt(20), false, r);
                byte[] d = java.util.Arrays.copyOf(data, data.length + tail.length);
                System.arraycopy(tail, 0, d, data.length, tail.length);
                yield d;
            }
        };
    }

    @Property(tries = 300)
    void gzipStreamedAsWholeArrays(@ForAll @IntRange(min = 1, max = 3) int members,
                                   @ForAll @IntRange(min = 0, max = 200_000) int size,
                                   @ForAll @IntRange(min = 0, max = 31) int flags,
                                   @ForAll @IntRange(min = 0, max = 4) int damage,
                                   @ForAll @IntRange(min = 0, max = 2) int capChoice,
                                   @ForAll long seed) throws IOException {
        Random r = new Random(seed);
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        long total = 0;
        for (int m = 0; m < members; m++) {
            byte[] content = payload(size / members, r.nextBoolean(), r);
            total += content.length;
            member(gz, content, flags & ~1, r);
        }
        byte[] data = damage(gz.toByteArray(), damage, r);
        long cap = switch (capChoice) {
            case 0 -> EnvelopeLimits.MAX_BODY_BYTES;
            case 1 -> total;
            default -> Math.max(0, total - 1 - r.nextInt((int) Math.min(1000, total + 1)));
        };
        sameOutcome(data, "gzip", cap);
    }

    @Property(tries = 200)
    void deflateStreamedAsWholeArrays(@ForAll boolean raw,
                                      @ForAll @IntRange(min = 0, max = 200_000) int size,
                                      @ForAll boolean text,
                                      @ForAll @IntRange(min = 0, max = 4) int damage,
                                      @ForAll @IntRange(min = 0, max = 2) int capChoice,
                                      @ForAll long seed) throws IOException {
        Random r = new Random(seed);
        byte[] content = payload(size, text, r);
        byte[] data = damage(deflate(content, raw), damage, r);
        long cap = switch (capChoice) {
            case 0 -> EnvelopeLimits.MAX_BODY_BYTES;
            case 1 -> size;
            default -> Math.max(0, size - 1 - r.nextInt(Math.min(1000, size + 1)));
        };
        sameOutcome(data, "deflate", cap);
    }

    @Test
    void aDecodedBodyOverOneMebibyteIsSegmented() throws IOException {
        byte[] content = payload(3 * 1024 * 1024, true, new Random(7));
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        member(gz, content, 0, new Random(8));
        Body encoded = Body.read(new ByteArrayInputStream(gz.toByteArray()), gz.size());
        ContentDecoding.Outcome o = ContentDecoding.decode(encoded, List.of("gzip"), EnvelopeLimits.MAX_BODY_BYTES);
        Body decoded = ((ContentDecoding.Outcome.Decoded) o).body();
        assertArrayEquals(content, decoded.toByteArray());
        assertEquals(Body.heapBytes(content.length), decoded.heapBytes(), "held in 64 KiB segments");
        assertTrue(decoded.segments().stream().allMatch(s -> s.remaining() <= Body.SEGMENT_BYTES));
    }
}
