package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The bounds of {@link LingeringClose#drain}: a client that never stops sending is read for at most
 * {@link LingeringClose#MAX_BYTES} bytes; one that sends a byte now and then is closed at {@link LingeringClose#TIME};
 * one that sends nothing (and does not close) is closed after {@link LingeringClose#QUIET}; one that closes ends it.
 */
class LingeringCloseBoundsTest {
    private final ScheduledThreadPoolExecutor timer = ReadDeadline.watchdog();

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    /**
     * A client's bytes: endless (every read fills the buffer), or one byte per read after {@code paceMillis}, until
     * {@link #closeNoting} ends a read that waits.
     */
    static final class Source extends InputStream {
        private final CountDownLatch closed = new CountDownLatch(1);
        private final long paceMillis;
        private final boolean endless;

        Source(long paceMillis, boolean endless) {
            this.paceMillis = paceMillis;
            this.endless = endless;
        }

        /** Closes the source as the socket's close does (a blocked read ends), noting it in {@code flag}. */
        void closeNoting(AtomicBoolean flag) {
            flag.set(true);
            closed.countDown();
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (endless) {
                return len; // a client sending as fast as it can
            }
            try {
                if (closed.await(paceMillis, TimeUnit.MILLISECONDS)) {
                    throw new IOException("closed");
                }
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            b[off] = 'x';
            return 1;
        }
    }

    @Test
    void aClientSendingWithoutEndIsReadAtMostTheByteBound() {
        AtomicBoolean closedByTimer = new AtomicBoolean();
        Source s = new Source(0, true);
        long read = LingeringClose.drain(new HttpInput(s), timer, () -> s.closeNoting(closedByTimer));
        assertEquals(LingeringClose.MAX_BYTES, read);
    }

    @Test
    void aClientTricklingIsClosedAtTheTimeBound() {
        AtomicBoolean closedByTimer = new AtomicBoolean();
        Source s = new Source(50, false); // a byte every 50 ms: never quiet for 500 ms
        long start = System.nanoTime();
        LingeringClose.drain(new HttpInput(s), timer, () -> s.closeNoting(closedByTimer));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(closedByTimer.get(), "the timer closed it");
        assertTrue(millis >= LingeringClose.TIME.toMillis() && millis < LingeringClose.TIME.toMillis() + 3_000,
                millis + " ms");
    }

    @Test
    void aQuietClientIsClosedAfterTheQuietBound() {
        AtomicBoolean closedByTimer = new AtomicBoolean();
        Source s = new Source(Long.MAX_VALUE, false); // sends nothing and never closes
        long start = System.nanoTime();
        assertEquals(0, LingeringClose.drain(new HttpInput(s), timer, () -> s.closeNoting(closedByTimer)));
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(closedByTimer.get());
        assertTrue(millis < LingeringClose.TIME.toMillis(), millis + " ms: the quiet bound, not the time bound");
    }

    @Test
    void aClientThatClosesEndsTheDrainAtOnce() {
        AtomicBoolean closedByTimer = new AtomicBoolean();
        InputStream ended = new java.io.ByteArrayInputStream(new byte[1000]);
        assertEquals(1000, LingeringClose.drain(new HttpInput(ended), timer, () -> closedByTimer.set(true)));
        assertFalse(closedByTimer.get());
    }
}
