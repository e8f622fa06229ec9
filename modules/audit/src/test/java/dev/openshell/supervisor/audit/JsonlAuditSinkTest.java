package dev.openshell.supervisor.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JsonlAuditSinkTest {
    @TempDir
    Path dir;

    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        Instant now = Instant.parse("2026-11-29T23:59:00Z");

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    /** A stream whose writes block until {@link #release} opens; {@link #writing} opens at the first write. */
    private static final class Stalling extends OutputStream {
        final java.util.concurrent.CountDownLatch writing = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        final ByteArrayOutputStream got = new ByteArrayOutputStream();

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) {
            writing.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            got.write(b, off, len);
        }
    }

    private static JsonObject event(int n) {
        return Json.createObjectBuilder().add("n", n).add("pad", "x".repeat(100)).build();
    }

    private List<Path> files() throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    private long lines() throws IOException {
        long n = 0;
        for (Path p : files()) {
            n += Files.readAllLines(p).size();
        }
        return n;
    }

    @Test
    void writesOneJsonObjectPerLine() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        try (JsonlAuditSink sink = JsonlAuditSink.toFile(log, JsonlAuditSink.DEFAULT_MAX_BYTES, new ManualClock())) {
            sink.emit(event(1));
            assertTrue(sink.awaitWritten(sink.emit(event(2))));
            // handed to the operating system once awaitWritten returns: readable before close
            List<String> lines = Files.readAllLines(log);
            assertEquals(2, lines.size());
            assertEquals(1, Json.createReader(new java.io.StringReader(lines.get(0))).readObject().getInt("n"));
        }
    }

    @Test
    void concurrentEmittersShareFlushesButLeaveNothingBuffered() throws Exception {
        Path log = dir.resolve("audit.jsonl");
        int threads = 16;
        int each = 400;
        try (JsonlAuditSink sink = JsonlAuditSink.toFile(log, JsonlAuditSink.DEFAULT_MAX_BYTES, new ManualClock())) {
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            List<Thread> started = new java.util.ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int base = t * each;
                started.add(Thread.ofVirtual().start(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    long last = 0;
                    for (int i = 0; i < each; i++) {
                        last = sink.emit(event(base + i));
                    }
                    sink.awaitWritten(last);
                }));
            }
            go.countDown();
            for (Thread t : started) {
                t.join();
            }
            // every emitter has returned from awaitWritten and the sink is still open: every line must be in the file
            List<String> lines = Files.readAllLines(log);
            assertEquals(threads * each, lines.size());
            assertEquals(threads * each, lines.stream()
                    .map(l -> Json.createReader(new java.io.StringReader(l)).readObject().getInt("n"))
                    .distinct().count());
        }
    }

    @Test
    void rotatesBySizeWithoutLosingAnEvent() throws IOException {
        Path log = dir.resolve("audit.jsonl");
        try (JsonlAuditSink sink = JsonlAuditSink.toFile(log, 1024, new ManualClock())) {
            for (int i = 0; i < 50; i++) {
                sink.emit(event(i));
            }
        }
        assertTrue(files().size() > 3, files().toString());
        for (Path p : files()) {
            assertTrue(Files.size(p) <= 1024, p + " is " + Files.size(p) + " bytes");
        }
        assertEquals(50, lines());
    }

    @Test
    void rotatesWhenTheUtcDayChanges() throws IOException {
        ManualClock clock = new ManualClock();
        Path log = dir.resolve("audit.jsonl");
        try (JsonlAuditSink sink = JsonlAuditSink.toFile(log, JsonlAuditSink.DEFAULT_MAX_BYTES, clock)) {
            sink.awaitWritten(sink.emit(event(1))); // written before midnight: a file holds the lines written on its UTC day
            clock.now = clock.now.plus(Duration.ofMinutes(2));
            sink.emit(event(2));
        }
        assertEquals(List.of(log, dir.resolve("audit.jsonl.20261130T000100Z")), files());
        assertEquals(1, Files.readAllLines(log).size());
        assertEquals(2, lines());
    }

    @Test
    void writeFailuresAreCountedNeverThrown() {
        OutputStream broken = new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("disk full");
            }
        };
        JsonlAuditSink sink = JsonlAuditSink.toStream(broken);
        sink.emit(event(1));
        sink.awaitWritten(sink.emit(event(2)));
        assertEquals(2, sink.dropped());
    }

    @Test
    void eventsAfterCloseAreDroppedAndCounted() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        JsonlAuditSink sink = JsonlAuditSink.toStream(out);
        sink.emit(event(1));
        sink.close();
        sink.emit(event(2));
        assertEquals(1, out.toString(StandardCharsets.UTF_8).lines().count());
        assertEquals(1, sink.dropped());
    }

    @Test
    void aStalledWriterDropsAndCountsWhatOverflowsItsQueueWithoutBlockingAndCloseWritesTheRest() throws Exception {
        Stalling stalling = new Stalling();
        List<String> reasons = new java.util.concurrent.CopyOnWriteArrayList<>();
        // a queue of 300 bytes: one event of about 120 waits, the third does not fit; emitters wait 50 ms at most
        JsonlAuditSink sink = JsonlAuditSink.toStream(stalling, reasons::add, 300, 50, 5);
        sink.emit(event(1));     // taken by the writer, which then blocks in the stream; emit returns at once
        assertTrue(stalling.writing.await(10, java.util.concurrent.TimeUnit.SECONDS));
        long second = sink.emit(event(2)); // queued behind it
        assertFalse(sink.awaitWritten(second)); // times out after 50 ms: line 2 stays queued
        sink.emit(event(3));     // queued: 2 x ~120 bytes fit in 300
        sink.emit(event(4));     // over the bound: dropped at once
        assertEquals(1, sink.dropped());
        assertEquals(List.of("overflow"), reasons);
        stalling.release.countDown();
        sink.close();            // writes what was queued before it
        List<Integer> written = stalling.got.toString(StandardCharsets.UTF_8).lines()
                .map(l -> Json.createReader(new java.io.StringReader(l)).readObject().getInt("n")).toList();
        assertEquals(List.of(1, 2, 3), written);
        sink.emit(event(5));
        assertEquals(List.of("overflow", "closed"), reasons);
    }

    @Test
    void aWriterKilledByAnUnexpectedFailureLeavesNoEmitterWaitingAndCountsWhatIsLost() {
        OutputStream exploding = new OutputStream() {
            @Override
            public void write(int b) {
                throw new IllegalStateException("not an IOException");
            }
        };
        List<String> reasons = new java.util.concurrent.CopyOnWriteArrayList<>();
        // awaitWritten would wait up to 60 s for a live writer: returning at all shows it was released
        JsonlAuditSink sink = JsonlAuditSink.toStream(exploding, reasons::add, 1 << 20, 60_000, 5);
        sink.awaitWritten(sink.emit(event(1)));
        assertEquals(List.of("writer_failed"), reasons, "the event the writer was writing is lost and counted");
        sink.emit(event(2));
        assertEquals(List.of("writer_failed", "writer_failed"), reasons, "the second event is dropped at once");
        assertEquals(2, sink.dropped());
        sink.close();
    }

    @Test
    void writeErrorsOfStandardOutputStylePrintStreamsAreCounted() {
        java.io.PrintStream swallowing = new java.io.PrintStream(new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                throw new IOException("broken pipe");
            }
        });
        JsonlAuditSink sink = JsonlAuditSink.toStream(swallowing);
        sink.awaitWritten(sink.emit(event(1)));
        assertEquals(1, sink.dropped(), "a PrintStream swallows the error; the sink must not");
        sink.close();
    }

    @Test
    void emitReturnsBeforeTheWriteAndAwaitWrittenWaitsForTheLinesUpToItsSequenceOnly() throws Exception {
        Stalling stalling = new Stalling();
        // awaitWritten may wait up to 60 s: a wait that ends shows the line was written, not that time ran out
        JsonlAuditSink sink = JsonlAuditSink.toStream(stalling, null, 1 << 20, 60_000, 5);
        long first = sink.emit(event(1)); // returns although the writer is stuck in the stream with this very line
        assertTrue(first > 0);
        assertTrue(stalling.writing.await(10, java.util.concurrent.TimeUnit.SECONDS));
        java.util.concurrent.atomic.AtomicBoolean othersDone = new java.util.concurrent.atomic.AtomicBoolean();
        Thread other = Thread.ofVirtual().start(() -> {
            sink.awaitWritten(first - 1); // lines before the stuck one: nothing to wait for
            othersDone.set(true);
        });
        assertTrue(other.join(Duration.ofSeconds(10)), "awaitWritten waited for a line after its sequence");
        assertTrue(othersDone.get());
        java.util.concurrent.atomic.AtomicBoolean mineDone = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.CountDownLatch emitted = new java.util.concurrent.CountDownLatch(1);
        Thread mine = Thread.ofVirtual().start(() -> {
            long second = sink.emit(event(2));
            emitted.countDown();
            sink.awaitWritten(second); // waits for line 2, behind the stuck line 1
            mineDone.set(stalling.got.toString(StandardCharsets.UTF_8).lines().count() == 2);
        });
        assertTrue(emitted.await(10, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(mine.isAlive(), "awaitWritten returned before its line was written");
        stalling.release.countDown();
        mine.join();
        assertTrue(mineDone.get(), "awaitWritten returned before its line reached the stream");
        sink.close();
    }

    @Test
    void tinyLimitsAreRefused() {
        assertThrows(IllegalArgumentException.class,
                () -> JsonlAuditSink.toFile(dir.resolve("a"), 10, Clock.systemUTC()));
    }
}
