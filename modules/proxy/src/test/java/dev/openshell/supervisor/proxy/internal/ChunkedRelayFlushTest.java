package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * When the relayed chunked body reaches the next hop: a chunk goes as soon as the next bytes are not there yet (a
 * stream's event is never held), and a chunk whose last chunk arrived with it leaves with it, in one write.
 */
class ChunkedRelayFlushTest {
    /** The bytes written to the socket, one entry per write that reached it. */
    private final List<String> writes = new ArrayList<>();

    private final OutputStream socket = new OutputStream() {
        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            writes.add(new String(b, off, len, StandardCharsets.ISO_8859_1));
        }
    };

    /** Hands out one segment per read, as the upstream's packets arrive; checks what was relayed before each. */
    private final class Segments extends InputStream {
        private final Deque<String> segments;
        private final Deque<Integer> writtenBefore;

        Segments(List<String> segments, List<Integer> writtenBefore) {
            this.segments = new ArrayDeque<>(segments);
            this.writtenBefore = new ArrayDeque<>(writtenBefore);
        }

        @Override
        public int read() {
            throw new AssertionError();
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (segments.isEmpty()) {
                return -1;
            }
            assertEquals(writtenBefore.poll(), writes.size(), "writes that reached the socket before this segment");
            byte[] s = segments.poll().getBytes(StandardCharsets.ISO_8859_1);
            System.arraycopy(s, 0, b, off, s.length);
            return s.length;
        }
    }

    private void relay(List<String> segments, List<Integer> writtenBefore) throws Exception {
        OutputStream out = new BufferedOutputStream(socket, 16 * 1024);
        new ChunkedDecoder(new HttpInput(new Segments(segments, writtenBefore))).relay(out, false);
    }

    @Test
    void aBodyWhoseEndArrivedWithItLeavesInOneWrite() throws Exception {
        relay(List.of("3\r\nok\n\r\n0\r\n\r\n"), List.of(0));
        assertEquals(List.of("3\r\nok\n\r\n0\r\n\r\n"), writes);
    }

    @Test
    void aChunkWhoseSuccessorHasNotArrivedGoesAtOnce() throws Exception {
        relay(List.of("5\r\nhello\r\n", "5\r\nworld\r\n0\r\n\r\n"), List.of(0, 1));
        assertEquals(List.of("5\r\nhello\r\n", "5\r\nworld\r\n0\r\n\r\n"), writes);
    }

    @Test
    void aChunkFollowedByAPartOfTheNextGoesAtOnce() throws Exception {
        relay(List.of("5\r\nhello\r\n5\r\nwo", "rld\r\n", "0\r\n\r\n"), List.of(0, 1, 2));
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        writes.forEach(w -> all.writeBytes(w.getBytes(StandardCharsets.ISO_8859_1)));
        assertEquals("5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n", all.toString(StandardCharsets.ISO_8859_1));
        assertEquals("5\r\nhello\r\n", writes.get(0), "the first chunk was not held for the rest of the next");
    }
}
