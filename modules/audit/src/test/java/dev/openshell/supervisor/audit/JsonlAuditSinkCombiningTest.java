package dev.openshell.supervisor.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who writes the audit lines: a caller of {@code awaitWritten} whose line is queued writes the queue itself
 * (combining); the writer thread writes what nobody waits for, after the sweep time or past the sweep bytes, and at
 * close. A sweep of 60 s keeps the writer thread out of a test's way: whatever is written before it was written by a
 * caller, or by the writer woken by the byte bound or by close.
 */
class JsonlAuditSinkCombiningTest {
    private static final long NEVER = 60_000;

    @TempDir
    Path dir;

    /** One flush: the thread that flushed and the lines it carried. */
    record Flush(String thread, List<Integer> lines) { }

    /**
     * Records each flush with its thread and lines; {@link #flushed} opens at the first. Writes block while
     * {@link #release} is closed, once {@link #stall} is set; {@link #writing} opens at the first blocked write.
     */
    static final class Recording extends OutputStream {
        final List<Flush> flushes = new CopyOnWriteArrayList<>();
        final CountDownLatch flushed = new CountDownLatch(1);
        final CountDownLatch writing = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        volatile boolean stall;
        private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] b, int off, int len) {
            if (stall) {
                writing.countDown();
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            pending.write(b, off, len);
        }

        @Override
        public synchronized void flush() {
            List<Integer> lines = pending.toString(StandardCharsets.UTF_8).lines()
                    .map(l -> Json.createReader(new StringReader(l)).readObject().getInt("n")).toList();
            pending.reset();
            if (!lines.isEmpty()) {
                flushes.add(new Flush(Thread.currentThread().getName(), lines));
                flushed.countDown();
            }
        }

        List<Integer> all() {
            List<Integer> all = new ArrayList<>();
            flushes.forEach(f -> all.addAll(f.lines()));
            return all;
        }
    }

    private static JsonObject event(int n) {
        return Json.createObjectBuilder().add("n", n).add("pad", "x".repeat(100)).build();
    }

    @Test
    void aCallerWhoseLineIsQueuedWritesEveryQueuedLineItselfInOneFlush() {
        Recording out = new Recording();
        JsonlAuditSink sink = JsonlAuditSink.toStream(out, null, 1 << 20, 60_000, NEVER);
        sink.emit(event(1)); // another connection's line, not awaited
        sink.emit(event(2));
        long third = sink.emit(event(3));
        assertTrue(out.flushes.isEmpty(), "emit wrote or woke a writer before the sweep");
        assertTrue(sink.awaitWritten(third));
        assertEquals(List.of(new Flush(Thread.currentThread().getName(), List.of(1, 2, 3))), out.flushes);
        assertTrue(sink.awaitWritten(third), "written already: returns at once");
        assertEquals(1, out.flushes.size());
        sink.close();
        assertEquals(0, sink.dropped());
    }

    @Test
    void aLineNobodyAwaitsIsWrittenByTheWriterThread() throws Exception {
        Recording out = new Recording();
        JsonlAuditSink sink = JsonlAuditSink.toStream(out, null, 1 << 20, 60_000, 5);
        sink.emit(event(1));
        assertTrue(out.flushed.await(10, TimeUnit.SECONDS), "a line nobody awaits was never written");
        assertEquals(List.of(new Flush("audit-writer", List.of(1))), out.flushes);
        sink.close();
    }

    @Test
    void theWriterThreadWritesPastTheSweepBytesWithoutWaitingTheSweepTime() throws Exception {
        Recording out = new Recording();
        JsonlAuditSink sink = JsonlAuditSink.toStream(out, null, 1 << 20, 60_000, NEVER);
        int n = 0;
        for (int bytes = 0; bytes < JsonlAuditSink.SWEEP_BYTES; ) {
            n++;
            bytes += JsonLine.line(event(n)).length();
            sink.emit(event(n));
        }
        assertTrue(out.flushed.await(10, TimeUnit.SECONDS), "the writer waited for the sweep past its byte bound");
        assertEquals("audit-writer", out.flushes.get(0).thread());
        sink.close();
        assertEquals(n, out.all().size());
    }

    @Test
    void closeWritesWhatIsQueuedWithoutWaitingTheSweep() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        JsonlAuditSink sink = JsonlAuditSink.toFile(log, JsonlAuditSink.DEFAULT_MAX_BYTES, Clock.systemUTC(), null,
                NEVER);
        sink.emit(event(1));
        sink.emit(event(2));
        long started = System.nanoTime();
        sink.close();
        assertTrue(System.nanoTime() - started < TimeUnit.MILLISECONDS.toNanos(NEVER / 2), "close waited the sweep");
        assertEquals(2, Files.readAllLines(log).size());
    }

    @Test
    void aCallerQueuedBehindAnotherThreadsWriteWaitsForItThenWritesTheNextBatchItself() throws Exception {
        Recording out = new Recording();
        out.stall = true;
        JsonlAuditSink sink = JsonlAuditSink.toStream(out, null, 1 << 20, 60_000, NEVER);
        Thread first = Thread.ofVirtual().name("first").start(() -> sink.awaitWritten(sink.emit(event(1))));
        assertTrue(out.writing.await(10, TimeUnit.SECONDS)); // "first" writes line 1 and is stuck in the stream
        CountDownLatch emitted = new CountDownLatch(1);
        List<Boolean> result = new CopyOnWriteArrayList<>();
        Thread second = Thread.ofVirtual().name("second").start(() -> {
            long seq = sink.emit(event(2));
            emitted.countDown();
            result.add(sink.awaitWritten(seq));
        });
        assertTrue(emitted.await(10, TimeUnit.SECONDS));
        assertTrue(second.isAlive(), "awaitWritten returned while its line was queued behind a stuck write");
        out.release.countDown();
        assertTrue(first.join(Duration.ofSeconds(10)));
        assertTrue(second.join(Duration.ofSeconds(10)));
        assertEquals(List.of(true), result);
        assertEquals(List.of(new Flush("first", List.of(1)), new Flush("second", List.of(2))), out.flushes);
        sink.close();
    }

    @Test
    void anInterruptedCallerWritingTheFileLeavesTheLogOpen() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        JsonlAuditSink sink = JsonlAuditSink.toFile(log, JsonlAuditSink.DEFAULT_MAX_BYTES, Clock.systemUTC(), null,
                NEVER);
        Thread.currentThread().interrupt();
        assertTrue(sink.awaitWritten(sink.emit(event(1))));
        assertTrue(Thread.interrupted(), "the caller's interrupt was swallowed");
        assertTrue(sink.awaitWritten(sink.emit(event(2))));
        assertEquals(2, Files.readAllLines(log).size());
        assertEquals(0, sink.dropped(), "an interrupted write closed the log");
        sink.close();
    }

    @Test
    void anUnexpectedFailureOfACallersWriteStopsTheSinkAndReachesNoCaller() {
        OutputStream exploding = new OutputStream() {
            @Override
            public void write(int b) {
                throw new IllegalStateException("not an IOException");
            }
        };
        List<String> reasons = new CopyOnWriteArrayList<>();
        JsonlAuditSink sink = JsonlAuditSink.toStream(exploding, reasons::add, 1 << 20, 60_000, NEVER);
        sink.emit(event(1));
        assertTrue(sink.awaitWritten(sink.emit(event(2))), "the caller is released, not thrown at");
        assertEquals(List.of("writer_failed", "writer_failed"), reasons, "both lines of the batch are counted");
        assertEquals(0, sink.emit(event(3)));
        assertEquals(3, sink.dropped());
        sink.close();
    }

    @Test
    void anErrorInACallersWriteIsNotThrownIntoTheRequestPath() {
        OutputStream erring = new OutputStream() {
            @Override
            public void write(int b) {
                throw new InternalError("an Error, not an IOException");
            }
        };
        List<String> reasons = new CopyOnWriteArrayList<>();
        JsonlAuditSink sink = JsonlAuditSink.toStream(erring, reasons::add, 1 << 20, 60_000, NEVER);
        assertTrue(sink.awaitWritten(sink.emit(event(1))));
        assertEquals(List.of("writer_failed"), reasons);
        assertEquals(0, sink.emit(event(2)), "the sink stopped");
        // not closed: close() flushes the stream again, and this stream answers with the Error
    }

    @Test
    void aWriteErrorOfACallersBatchIsCountedPerLine() {
        List<String> reasons = new CopyOnWriteArrayList<>();
        OutputStream failing = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("disk full");
            }
        };
        JsonlAuditSink sink = JsonlAuditSink.toStream(failing, reasons::add, 1 << 20, 60_000, NEVER);
        sink.emit(event(1));
        assertTrue(sink.awaitWritten(sink.emit(event(2))));
        assertEquals(List.of("write_error", "write_error"), reasons);
        assertFalse(sink.emit(event(3)) == 0, "a write error does not stop the sink");
        sink.close();
    }
}
