package dev.openshell.supervisor.audit;

import jakarta.json.JsonObject;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Writes each event as one JSON line (JSONL), to standard output or to a file, from a writer thread of its own.
 *
 * <p>A file is rotated when the UTC day of a write changes (a line queued in the last instant of a day may open the
 * next day's file; its event carries its own time) and when it would grow past {@code maxBytes}: the current file is
 * renamed {@code <name>.<yyyyMMdd'T'HHmmss'Z'>[.<n>]} beside it and a new one started; rotated files are kept (the
 * operator's shipper owns them).
 *
 * <p><b>Writing.</b> {@link #emit} encodes the event on the caller's thread, queues the line and returns; the writer
 * thread hands it to the operating system while the request goes on (upstream, typically); it returns the line's sequence number.
 * {@link #awaitWritten} waits until every line up to a sequence number has been handed to the operating system: the
 * proxy's per-connection barrier calls it before it writes to or closes a client connection, so the lines about a
 * connection are in the file before what the proxy sends it next reaches the client. A crash of the JVM loses the lines still queued: of requests whose responses were not yet sent,
 * though their upstream may have seen them. The writer is one platform thread
 * ({@code audit-writer}) that takes every queued line at once, writes them in one buffered pass and flushes once per
 * batch ("group commit"): under load the file sees one write system call per batch instead of one per event, and
 * the request threads (virtual threads) never block their carrier in a file write. Lines are written in the order
 * they were queued.
 *
 * <p><b>Bounds.</b> At most {@value #MAX_QUEUED_BYTES} bytes of lines wait at one time; an event that would exceed
 * that (the disk or the reader of standard output stalls) is dropped and counted ({@code overflow}), never blocking
 * the request. {@link #awaitWritten} waits at most {@value #MAX_AWAIT_MILLIS} ms; past that the caller goes on and
 * the lines stay queued. {@link #close()} writes every line queued before it (nothing queued is lost on an orderly stop)
 * and waits at most {@value #CLOSE_MILLIS} ms for that.
 *
 * <p>Write errors never reach the caller: the event is counted in {@link #dropped()} and reported to the drop
 * listener ({@code write_error}), and one warning is logged per failure streak. Events emitted after {@link #close()}
 * are counted as {@code closed}.
 */
public final class JsonlAuditSink implements AuditSink {
    /** Default size limit of one file before rotation: 100 MiB. */
    public static final long DEFAULT_MAX_BYTES = 100L * 1024 * 1024;
    /** The most bytes of lines waiting for the writer at one time: 8 MiB (about 6,000 events). */
    public static final int MAX_QUEUED_BYTES = 8 * 1024 * 1024;
    /** The longest {@link #awaitWritten} waits for the caller's lines to be written, in milliseconds. */
    public static final long MAX_AWAIT_MILLIS = 2_000;
    /** The longest {@link #close()} waits for the queued lines to be written, in milliseconds. */
    public static final long CLOSE_MILLIS = 10_000;
    private static final int BUFFER_BYTES = 64 * 1024;
    private static final long MILLIS_PER_DAY = 86_400_000L;
    private static final System.Logger LOG = System.getLogger(JsonlAuditSink.class.getName());
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    private final Path file;
    private final long maxBytes;
    private final Clock clock;
    private final Consumer<String> onDrop;
    private final int maxQueuedBytes;
    private final long awaitNanos;
    private final AtomicLong dropped = new AtomicLong();
    /** Guards the queue, the sequence numbers, {@code closed} and {@code writerIdle}. */
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition queued = lock.newCondition();
    private final Condition written = lock.newCondition();
    private ArrayList<JsonLine.Line> queue = new ArrayList<>();
    private int queuedBytes;
    /** Sequence number of the last line queued; of the last line the writer has finished with. */
    private long lastQueued;
    /** Written under the lock; read without it by {@link #awaitWritten}'s fast path. */
    private volatile long lastWritten;
    private boolean closed;
    private boolean overflowing;
    /** Set while the writer waits for lines: only then does an emitter signal it (a signal costs a queue transfer). */
    private boolean writerIdle;
    /** Set when the writer thread ended on an unexpected failure: events are then dropped at once. */
    private boolean writerDead;
    private final Thread writer;
    // the writer thread's own state
    private OutputStream out;
    private long size;
    private LocalDate day;
    private boolean failing;
    /** Lines of the batch being written: lost, and counted, if the writer dies in the middle of it. */
    private int inFlight;

    private JsonlAuditSink(Path file, OutputStream out, long maxBytes, Clock clock, Consumer<String> onDrop,
                           int maxQueuedBytes, long awaitMillis) {
        this.maxQueuedBytes = maxQueuedBytes;
        this.awaitNanos = TimeUnit.MILLISECONDS.toNanos(awaitMillis);
        this.file = file;
        this.out = out;
        this.maxBytes = maxBytes;
        this.clock = clock;
        this.onDrop = onDrop == null ? reason -> { } : onDrop;
        this.writer = Thread.ofPlatform().name("audit-writer").daemon(true).unstarted(this::writeLoop);
    }

    /**
     * {@return a sink writing to {@code stream} (standard output, typically); never rotated}
     *
     * @param stream the stream; not closed by {@link #close()}
     */
    public static JsonlAuditSink toStream(OutputStream stream) {
        return toStream(stream, null);
    }

    /**
     * {@return a sink writing to {@code stream} (standard output, typically); never rotated}
     *
     * @param stream the stream; not closed by {@link #close()}
     * @param onDrop told the reason of each event not written ({@code overflow}, {@code write_error},
     *     {@code closed}, {@code writer_failed}); called on the emitter's or the writer's thread, must not block;
     *     {@code null} for none
     */
    public static JsonlAuditSink toStream(OutputStream stream, Consumer<String> onDrop) {
        return toStream(stream, onDrop, MAX_QUEUED_BYTES, MAX_AWAIT_MILLIS);
    }

    /** {@link #toStream(OutputStream, Consumer)} with other bounds (tests). */
    static JsonlAuditSink toStream(OutputStream stream, Consumer<String> onDrop, int maxQueuedBytes,
                                   long awaitMillis) {
        OutputStream w = new BufferedOutputStream(new NonClosingStream(stream), BUFFER_BYTES);
        JsonlAuditSink sink = new JsonlAuditSink(null, w, Long.MAX_VALUE, Clock.systemUTC(), onDrop, maxQueuedBytes,
                awaitMillis);
        sink.writer.start();
        return sink;
    }

    /**
     * Opens (appending) a file sink.
     *
     * @param file the audit log; its directory is created if missing
     * @param maxBytes rotate before a file would exceed this size, in bytes (at least 1024)
     * @param clock the clock that decides the day
     * @return the sink
     * @throws IOException if the file cannot be opened
     * @throws IllegalArgumentException if {@code maxBytes} is below 1024
     */
    public static JsonlAuditSink toFile(Path file, long maxBytes, Clock clock) throws IOException {
        return toFile(file, maxBytes, clock, null);
    }

    /**
     * Opens (appending) a file sink.
     *
     * @param file the audit log; its directory is created if missing
     * @param maxBytes rotate before a file would exceed this size, in bytes (at least 1024)
     * @param clock the clock that decides the day
     * @param onDrop told the reason of each event not written ({@code overflow}, {@code write_error},
     *     {@code closed}, {@code writer_failed}); called on the emitter's or the writer's thread, must not block;
     *     {@code null} for none
     * @return the sink
     * @throws IOException if the file cannot be opened
     * @throws IllegalArgumentException if {@code maxBytes} is below 1024
     */
    public static JsonlAuditSink toFile(Path file, long maxBytes, Clock clock, Consumer<String> onDrop)
            throws IOException {
        if (maxBytes < 1024) {
            throw new IllegalArgumentException("audit log size limit " + maxBytes + " bytes is below 1024");
        }
        Objects.requireNonNull(clock, "clock");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        JsonlAuditSink sink = new JsonlAuditSink(file, null, maxBytes, clock, onDrop, MAX_QUEUED_BYTES,
                MAX_AWAIT_MILLIS);
        sink.open();
        sink.writer.start();
        return sink;
    }

    private void open() throws IOException {
        out = newFileStream(file);
        size = Files.size(file);
        day = LocalDate.now(clock.withZone(ZoneOffset.UTC));
        if (Files.exists(file) && size > 0) {
            LocalDate modified = LocalDate.ofInstant(Files.getLastModifiedTime(file).toInstant(), ZoneOffset.UTC);
            if (modified.isBefore(day)) {
                day = modified; // a file left from an earlier day rotates on the first write
            }
        }
    }

    private static OutputStream newFileStream(Path file) throws IOException {
        return new BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND, StandardOpenOption.WRITE), BUFFER_BYTES);
    }

    @Override
    public long emit(JsonObject event) {
        // encoded once, on the caller's thread; the writer only copies bytes
        JsonLine.Line line = JsonLine.line(event);
        long sequence = 0;
        String drop = null;
        boolean warnOverflow = false;
        int behind = 0;
        lock.lock();
        try {
            if (closed || writerDead) {
                drop = closed ? "closed" : "writer_failed";
            } else if (queuedBytes > 0 && (long) queuedBytes + line.length() > maxQueuedBytes) {
                drop = "overflow";
                if (!overflowing) {
                    overflowing = true;
                    warnOverflow = true;
                    behind = queuedBytes;
                }
            } else {
                queue.add(line);
                queuedBytes += line.length();
                sequence = ++lastQueued;
                if (writerIdle) {
                    queued.signal(); // a busy writer takes this line with its next batch without being told
                }
            }
        } finally {
            lock.unlock();
        }
        // logged and reported outside the lock: a handler writing to a stalled stream must not stall every emitter
        if (warnOverflow) {
            LOG.log(System.Logger.Level.WARNING, "audit log writer is behind by " + behind
                    + " bytes; dropping and counting events until it catches up");
        }
        if (drop != null) {
            dropped(drop, 1);
        }
        return sequence;
    }

    /**
     * Waits until every line up to {@code sequence} has been handed to the operating system (or dropped: a write
     * error, a dead writer), at most {@value #MAX_AWAIT_MILLIS} ms. Returns at once, without taking the lock, when it
     * has been already, which is the common case: the writer writes while the request is upstream.
     */
    @Override
    public boolean awaitWritten(long sequence) {
        if (sequence <= lastWritten) {
            return true;
        }
        lock.lock();
        try {
            long deadline = System.nanoTime() + awaitNanos;
            boolean interrupted = false;
            long nanos;
            while (lastWritten < sequence && !writerDead && (nanos = deadline - System.nanoTime()) > 0) {
                try {
                    written.awaitNanos(nanos);
                } catch (InterruptedException e) {
                    interrupted = true; // the lines are queued: they are written whatever the caller does
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return lastWritten >= sequence || writerDead;
        } finally {
            lock.unlock();
        }
    }

    private void dropped(String reason, int n) {
        dropped.addAndGet(n);
        for (int i = 0; i < n; i++) {
            try {
                onDrop.accept(reason);
            } catch (RuntimeException e) {
                // a broken listener must not stop the counting or the writer
            }
        }
    }

    private void writeLoop() {
        try {
            writeBatches();
        } catch (Throwable t) {
            // an unexpected failure (not an IOException, which write() counts): nothing may wait for this thread now
            int lost;
            lock.lock();
            try {
                writerDead = true;
                lost = inFlight + queue.size();
                queue.clear();
                queuedBytes = 0;
                // counted before anyone waiting is released: a caller of awaitWritten then sees the loss counted
                dropped("writer_failed", lost);
                written.signalAll();
            } finally {
                lock.unlock();
            }
            LOG.log(System.Logger.Level.ERROR, "the audit log writer stopped (" + t.getClass().getSimpleName()
                    + "); audit events are dropped and counted from now on");
            if (t instanceof Error e && !(t instanceof StackOverflowError)) {
                throw e;
            }
        }
    }

    private void writeBatches() {
        ArrayList<JsonLine.Line> spare = new ArrayList<>();
        while (true) {
            ArrayList<JsonLine.Line> batch;
            long upTo;
            boolean last;
            lock.lock();
            try {
                while (queue.isEmpty() && !closed) {
                    writerIdle = true;
                    queued.awaitUninterruptibly();
                }
                writerIdle = false;
                batch = queue;
                queue = spare;
                queuedBytes = 0;
                overflowing = false;
                upTo = lastQueued;
                last = closed;
            } finally {
                lock.unlock();
            }
            inFlight = batch.size();
            write(batch);
            inFlight = 0;
            batch.clear();
            spare = batch;
            lock.lock();
            try {
                lastWritten = upTo;
                written.signalAll();
                if (last && queue.isEmpty()) {
                    return;
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** Writes one batch and flushes it; runs on the writer thread only. */
    private void write(List<JsonLine.Line> batch) {
        if (batch.isEmpty()) {
            return;
        }
        try {
            for (JsonLine.Line line : batch) {
                if (file != null) {
                    long bytes = line.length();
                    long today = Math.floorDiv(clock.millis(), MILLIS_PER_DAY); // the UTC day, without a LocalDate
                    if ((size > 0 && size + bytes > maxBytes) || today != day.toEpochDay()) {
                        out.flush();
                        rotate(LocalDate.ofEpochDay(today));
                    }
                    size += bytes;
                }
                out.write(line.bytes(), 0, line.length());
            }
            out.flush();
            if (failing) {
                failing = false;
                LOG.log(System.Logger.Level.INFO, "audit log writable again");
            }
        } catch (IOException e) {
            // the batch did not reach the operating system as a whole: count every line of it as lost
            dropped("write_error", batch.size());
            if (!failing) {
                failing = true;
                LOG.log(System.Logger.Level.WARNING, "audit event not written ({0}); counting dropped events",
                        e.getClass().getSimpleName());
            }
        }
    }

    private void rotate(LocalDate today) throws IOException {
        out.close();
        if (Files.exists(file) && Files.size(file) > 0) {
            String base = file.getFileName() + "." + STAMP.format(clock.instant());
            Path target = file.resolveSibling(base);
            for (int n = 1; Files.exists(target); n++) {
                target = file.resolveSibling(base + "." + n);
            }
            Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
        }
        out = newFileStream(file);
        size = 0;
        day = today;
    }

    /** {@return the number of events that could not be written (queue overflow, write errors, after close)} */
    public long dropped() {
        return dropped.get();
    }

    /**
     * Writes every line queued so far, then stops the writer and closes the file; waits at most
     * {@value #CLOSE_MILLIS} ms for the writer (a writer stuck in a write is left behind, and its lines counted by
     * nobody: the process is stopping).
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            queued.signal();
        } finally {
            lock.unlock();
        }
        boolean stopped = false;
        try {
            stopped = writer.join(java.time.Duration.ofMillis(CLOSE_MILLIS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!stopped) {
            LOG.log(System.Logger.Level.WARNING, "the audit log writer did not finish within " + CLOSE_MILLIS
                    + " ms; closing without it");
            return;
        }
        try {
            out.close();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing the audit log failed: {0}", e.getClass().getSimpleName());
        }
    }

    /** Keeps {@link #close()} from closing standard output. */
    private static final class NonClosingStream extends OutputStream {
        private final OutputStream delegate;

        NonClosingStream(OutputStream delegate) {
            this.delegate = delegate;
        }

        @Override
        public void write(int b) throws IOException {
            delegate.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            delegate.write(b, off, len);
        }

        @Override
        public void flush() throws IOException {
            delegate.flush();
            // System.out is a PrintStream, which swallows its write errors: surface them as the sink's
            if (delegate instanceof java.io.PrintStream ps && ps.checkError()) {
                throw new IOException("the output stream reported an error");
            }
        }

        @Override
        public void close() throws IOException {
            delegate.flush();
        }
    }
}
