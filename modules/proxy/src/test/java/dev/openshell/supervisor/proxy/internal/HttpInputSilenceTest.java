package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The silence release of {@link HttpInput} sets the source's read timeout once when holding starts and restores it
 * once when holding ends, not around every read: a scripted source (no timing) answers reads with text, a read
 * timeout (the upstream silent) or the end, and a counting {@link HttpInput.Silence} records every timeout change.
 */
class HttpInputSilenceTest {
    private static final Object TIMEOUT = new Object();
    private static final Object END = new Object();

    /** A source that answers each read with the next scripted step. */
    private static final class Scripted extends InputStream {
        private final Deque<Object> steps;

        Scripted(Object... steps) {
            this.steps = new ArrayDeque<>(List.of(steps));
        }

        @Override
        public int read() {
            throw new UnsupportedOperationException();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Object step = steps.removeFirst();
            if (step == TIMEOUT) {
                throw new SocketTimeoutException("read timed out");
            }
            if (step == END) {
                return -1;
            }
            byte[] text = ((String) step).getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(text, 0, b, off, text.length);
            return text.length;
        }
    }

    /** Holds while {@link #held} is set; records the timeouts set and the releases. */
    private static final class Counting implements HttpInput.Silence {
        final List<String> calls = new ArrayList<>();
        boolean held;

        @Override
        public int holdMillis() {
            return held ? ResponseScrub.SILENCE_MILLIS : 0;
        }

        @Override
        public void waitAtMost(int millis) {
            calls.add("timeout " + millis);
        }

        @Override
        public void silent() {
            calls.add("silent");
            held = false;
        }
    }

    private static String next(HttpInput in) throws IOException {
        byte[] b = new byte[64];
        int n = in.read(b, 0, b.length);
        return n < 0 ? "end" : new String(b, 0, n, StandardCharsets.US_ASCII);
    }

    @Test
    void aHoldOverManyReadsSetsTheTimeoutOnceAndRestoresItOnce() throws IOException {
        HttpInput in = new HttpInput(new Scripted("a", "b", "c", "d", END));
        Counting s = new Counting();
        in.silence(s);
        assertEquals("a", next(in));
        s.held = true;
        assertEquals("b", next(in));
        assertEquals("c", next(in));
        s.held = false;
        assertEquals("d", next(in));
        assertEquals("end", next(in));
        assertEquals(List.of("timeout 200", "timeout 0"), s.calls);
    }

    @Test
    void silenceReleasesThenTheReadWaitsWithTheUsualTimeout() throws IOException {
        HttpInput in = new HttpInput(new Scripted("a", "b", TIMEOUT, "c", "d", END));
        Counting s = new Counting();
        in.silence(s);
        s.held = true;
        assertEquals("a", next(in));
        assertEquals("b", next(in));
        assertEquals("c", next(in)); // silent, released, then read as usual
        assertEquals("d", next(in));
        assertEquals("end", next(in));
        assertEquals(List.of("timeout 200", "timeout 0", "silent"), s.calls);
    }

    @Test
    void unsettingTheSilenceWhileHoldingRestoresTheTimeoutOnce() throws IOException {
        HttpInput in = new HttpInput(new Scripted("a", "b", END));
        Counting s = new Counting();
        in.silence(s);
        s.held = true;
        assertEquals("a", next(in));
        in.silence(null);
        in.silence(null);
        assertEquals("b", next(in));
        assertEquals("end", next(in));
        assertEquals(List.of("timeout 200", "timeout 0"), s.calls);
    }
}
