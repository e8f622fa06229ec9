package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Supplier;
import java.util.zip.CRC32;
import java.util.zip.Deflater;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/**
 * Small gzip data without a label (attacker pass finding 3): relayed as sent only when its delivered bytes and its
 * decoded data both hold no value and it is exactly whole members.
 */
class UnlabelledGzipTest {
    static final String VALUE = "CrEdV4lue-7f3a9c2e1b8d4f6a0e5c7b9d2f4a6c8e";
    static final Supplier<SecretScrubber> PROBES =
            () -> new SecretScrubber(Map.of(VALUE, "openshell:resolve:env:API_TOKEN"));

    /** A gzip member (RFC 1952) with the optional header fields given (null: absent). */
    static byte[] member(byte[] content, byte[] extra, String name, String comment) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int flags = (extra != null ? 4 : 0) | (name != null ? 8 : 0) | (comment != null ? 16 : 0);
        b.writeBytes(new byte[] {0x1f, (byte) 0x8b, 8, (byte) flags, 0, 0, 0, 0, 0, (byte) 255});
        if (extra != null) {
            b.write(extra.length & 0xff);
            b.write(extra.length >>> 8);
            b.writeBytes(extra);
        }
        for (String s : new String[] {name, comment}) {
            if (s != null) {
                b.writeBytes(s.getBytes(StandardCharsets.ISO_8859_1));
                b.write(0);
            }
        }
        Deflater d = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
        d.setInput(content);
        d.finish();
        byte[] buf = new byte[content.length * 2 + 64];
        int n = d.deflate(buf);
        d.end();
        b.write(buf, 0, n);
        CRC32 crc = new CRC32();
        crc.update(content);
        int[] le = {(int) crc.getValue(), content.length};
        for (int v : le) {
            b.writeBytes(new byte[] {(byte) v, (byte) (v >>> 8), (byte) (v >>> 16), (byte) (v >>> 24)});
        }
        return b.toByteArray();
    }

    static byte[] member(String content) {
        return member(content.getBytes(StandardCharsets.UTF_8), null, null, null);
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.writeBytes(p);
        }
        return b.toByteArray();
    }

    private static UnlabelledGzip.Decision decide(byte[] body) {
        return UnlabelledGzip.decide(body, PROBES);
    }

    @Test
    void cleanMembersAreRelayedAsSent() {
        byte[] one = member("hello\n");
        assertEquals(UnlabelledGzip.Verdict.AS_SENT, decide(one).verdict());
        byte[] two = concat(member("hello\n"), member("world\n"));
        assertEquals(UnlabelledGzip.Verdict.AS_SENT, decide(two).verdict(), "a second clean member");
        byte[] named = member("hello\n".getBytes(StandardCharsets.UTF_8), new byte[] {'A', 'B', 0, 0}, "f.txt", "c");
        assertEquals(UnlabelledGzip.Verdict.AS_SENT, decide(named).verdict(), "clean header fields");
    }

    @Test
    void aValueAfterTheMemberOrInAHeaderFieldIsNeverRelayedAsSent() {
        byte[] clean = member("hello\n");
        byte[] tail = concat(clean, ("\nauthorization: Bearer " + VALUE + "\n").getBytes(StandardCharsets.UTF_8));
        UnlabelledGzip.Decision d = decide(tail);
        assertEquals(UnlabelledGzip.Verdict.REENCODE, d.verdict(), "trailing plaintext");
        assertArrayEquals(clean, d.members(), "re-encoded without the bytes after the member");
        byte[] content = "hello\n".getBytes(StandardCharsets.UTF_8);
        byte[] v = VALUE.getBytes(StandardCharsets.ISO_8859_1);
        for (byte[] body : new byte[][] {member(content, null, VALUE, null), member(content, null, null, VALUE),
                member(content, concat(new byte[] {'X', 'Y', (byte) v.length, 0}, v), null, null)}) {
            UnlabelledGzip.Decision h = decide(body);
            assertEquals(UnlabelledGzip.Verdict.REENCODE, h.verdict(), "FNAME, FCOMMENT, FEXTRA");
            assertArrayEquals(body, h.members());
        }
        assertEquals(UnlabelledGzip.Verdict.REENCODE, decide(member("x " + VALUE + " y")).verdict(),
                "a value inside the compressed data");
        assertEquals(UnlabelledGzip.Verdict.REENCODE, decide(concat(member("hi"), member(VALUE))).verdict(),
                "a value in a second member");
        assertEquals(UnlabelledGzip.Verdict.REENCODE, decide(member(member("hi"), null, null, null)).verdict(),
                "nested gzip");
        assertEquals(UnlabelledGzip.Verdict.REENCODE, decide(concat(clean, "x".getBytes(StandardCharsets.UTF_8)))
                .verdict(), "any bytes after the members");
    }

    @Test
    void aMemberThatDoesNotDecodeIsUndecodable() {
        byte[] m = member("hello world, hello world\n");
        assertEquals(UnlabelledGzip.Verdict.UNDECODABLE, decide(Arrays.copyOf(m, m.length - 3)).verdict(),
                "truncated trailer");
        assertEquals(UnlabelledGzip.Verdict.UNDECODABLE, decide(Arrays.copyOf(m, 14)).verdict(), "truncated data");
        byte[] bad = m.clone();
        bad[bad.length - 8] ^= 1;
        assertEquals(UnlabelledGzip.Verdict.UNDECODABLE, decide(bad).verdict(), "CRC mismatch");
        assertEquals(UnlabelledGzip.Verdict.UNDECODABLE, decide(concat(m, Arrays.copyOf(m, 12))).verdict(),
                "a second member truncated");
    }

    /** The value placed at any offset of a member and the bytes around it: the body is never relayed as sent. */
    @Property(tries = 300)
    void aValueAnywhereAroundAMemberIsNeverRelayedAsSent(@ForAll @StringLength(max = 200) String content,
                                                         @ForAll @StringLength(max = 40) String tail,
                                                         @ForAll @IntRange(min = 0, max = 10_000) int at) {
        byte[] clean = concat(member(content), tail.getBytes(StandardCharsets.UTF_8));
        int offset = at % (clean.length + 1);
        byte[] body = concat(Arrays.copyOf(clean, offset), VALUE.getBytes(StandardCharsets.UTF_8),
                Arrays.copyOfRange(clean, offset, clean.length));
        if (!ScrubbingRelay.gzipAt(body, body.length)) {
            return; // the value went before the magic: not gzip data, scrubbed as bytes
        }
        assertNotEquals(UnlabelledGzip.Verdict.AS_SENT, decide(body).verdict());
    }

    /** Clean data around a member: relayed as sent exactly when nothing follows the members. */
    @Property(tries = 200)
    void cleanDataIsRelayedAsSentOnlyWithoutATail(@ForAll @StringLength(max = 200) String content,
                                                  @ForAll @StringLength(max = 20) String tail) {
        if ((content + tail).contains(VALUE)) {
            return;
        }
        byte[] body = concat(member(content), tail.getBytes(StandardCharsets.UTF_8));
        UnlabelledGzip.Verdict v = decide(body).verdict();
        if (tail.isEmpty()) {
            assertEquals(UnlabelledGzip.Verdict.AS_SENT, v);
        } else {
            assertNotEquals(UnlabelledGzip.Verdict.AS_SENT, v);
        }
    }
}
