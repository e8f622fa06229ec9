package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The per-connection audit barrier: what it waits for, and that a timed-out line holds the connection back once. */
class AuditBarrierTest {
    /** A log that records each wait and answers as told. */
    private static final class Log implements AuditBarrier.Log {
        final List<Long> waits = new CopyOnWriteArrayList<>();
        volatile boolean written = true;

        @Override
        public boolean awaitWritten(long sequence) {
            waits.add(sequence);
            return written;
        }
    }

    @Test
    void waitsForTheHighestLineNotedFromAnyThreadAndNothingWhenNoneWas() throws Exception {
        Log log = new Log();
        AuditBarrier barrier = new AuditBarrier(log);
        barrier.await();
        assertEquals(List.of(), log.waits, "nothing emitted: nothing to wait for");
        barrier.emitted(7);
        Thread other = Thread.ofVirtual().start(() -> barrier.emitted(12)); // a watchdog or relay thread
        other.join();
        barrier.emitted(9);
        barrier.emitted(0); // a dropped line
        barrier.await();
        assertEquals(List.of(12L), log.waits, "the highest line noted for the connection, whoever emitted it");
    }

    @Test
    void aLineTheWaitTimedOutOnIsNotWaitedForAgain() {
        Log log = new Log();
        log.written = false;
        AuditBarrier barrier = new AuditBarrier(log);
        barrier.emitted(3);
        barrier.await();
        barrier.await();
        assertEquals(List.of(3L), log.waits, "a stalled line holds the connection back once, not per write");
        barrier.emitted(4);
        barrier.await();
        assertEquals(List.of(3L, 4L), log.waits, "a later line is waited for");
    }
}
