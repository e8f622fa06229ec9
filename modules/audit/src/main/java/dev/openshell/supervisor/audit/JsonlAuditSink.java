package dev.openshell.supervisor.audit;

import jakarta.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Writes each event as one JSON line (JSONL), to standard output or to a file.
 *
 * <p>A file is rotated when the UTC day of a write changes (a line queued in the last instant of a day may open the
 * next day's file; its event carries its own time) and when it would grow past {@code maxBytes}: the current file is
 * renamed {@code <name>.<yyyyMMdd'T'HHmmss'Z'>[.<n>]} beside it and a new one started; rotated files are kept (the
 * operator's shipper owns them).
 *
 * <p><b>Writing.</b> {@link #emit} encodes the event on the caller's thread, queues the line and returns its sequence
 * number; it wakes nobody. {@link #awaitWritten} waits until every line up to a sequence number has been handed to
 * the operating system: the proxy's per-connection barrier calls it before it writes to or closes a client
 * connection, so the lines about a connection are in the file before what the proxy sends it next reaches the
 * client. A caller whose line is still queued writes the queue itself, every queued line of every connection in one
 * buffered pass and one flush ("combining"): one thread at a time writes (a claim taken under the sink's lock), a
 * caller that finds another thread writing waits for that write and then, if its line was queued after that batch
 * was taken, writes the next batch. So under load one write system call carries the lines of several exchanges, and
 * no thread is woken to hand a line over. Lines are written in the order they were queued.
 *
 * <p>Lines nobody waits for (configuration changes, background events, a request whose connection ends without a
 * write) are written by the sink's own platform thread ({@code audit-writer}): it wakes when the first line is queued
 * into an empty queue, then writes what is queued once the oldest queued line is {@value #SWEEP_MILLIS} ms old (or
 * {@value #SWEEP_BYTES} bytes are queued, or the sink closes), unless a waiting caller wrote it before. So every line
 * reaches the operating system within {@value #SWEEP_MILLIS} ms of being queued, plus the time of the write before it.
 * A crash of the JVM loses the lines still queued: of requests whose responses were not yet sent, though their
 * upstream may have seen them.
 *
 * <p><b>Bounds.</b> At most {@value #MAX_QUEUED_BYTES} bytes of lines wait at one time; an event that would exceed
 * that (the disk or the reader of standard output stalls) is dropped and counted ({@code overflow}), never blocking
 * the request. {@link #awaitWritten} waits at most {@value #MAX_AWAIT_MILLIS} ms for a write by another thread; past
 * that the caller goes on and the lines stay queued. The one thread writing when the disk stalls waits for its write
 * to return (the file write blocks that thread only: a virtual thread's carrier is compensated by the JDK); every
 * other caller waits the bound, so a stalled disk holds up the connections waiting for it, no others.
 * {@link #close()} writes every line queued before it (nothing queued is lost on an orderly stop) and waits at most
 * {@value #CLOSE_MILLIS} ms for that.
 *
 * <p>Write errors never reach the caller: the event is counted in {@link #dropped()} and reported to the drop
 * listener ({@code write_error}), and one warning is logged per failure streak. An unexpected failure of a write (not
 * an {@link IOException}) stops the sink: the lines of that batch and the queued ones are counted
 * ({@code writer_failed}) and later events dropped at once. Events emitted after {@link #close()} are counted as
 * {@code closed}.
 */
public final class JsonlAuditSink implements AuditSink {
    /** Default size limit of one file before rotation: 100 MiB. */
    public static final long DEFAULT_MAX_BYTES = 100L * 1024 * 1024;
    /** The most bytes of lines waiting to be written at one time: 8 MiB (about 6,000 events). */
    public static final int MAX_QUEUED_BYTES = 8 * 1024 * 1024;
    /** The longest {@link #awaitWritten} waits for another thread's write of the caller's lines, in milliseconds. */
    public static final long MAX_AWAIT_MILLIS = 2_000;
    /** The longest {@link #close()} waits for the queued lines to be written, in milliseconds. */
    public static final long CLOSE_MILLIS = 10_000;
    /** The most time a queued line waits for a caller of {@link #awaitWritten} to write it, in milliseconds. */
    public static final long SWEEP_MILLIS = 5;
    /** Queued bytes at which the writer thread writes without waiting {@value #SWEEP_MILLIS} ms: 64 KiB. */
    public static final int SWEEP_BYTES = 64 * 1024;
    private static final System.Logger LOG = System.getLogger(JsonlAuditSink.class.getName());

    private final AuditFile output;
    private final Consumer<String> onDrop;
    private final int maxQueuedBytes;
    private final long awaitNanos;
    private final long sweepNanos;
    private final AtomicLong dropped = new AtomicLong();
    /** Guards every field below but {@code lastWritten}'s reads, and the writing claim. */
    private final ReentrantLock lock = new ReentrantLock();
    /** The writer thread waits on it: for a first line (idle) or for the oldest line's time (sweeping). */
    private final Condition queued = lock.newCondition();
    /** Signalled after each batch (written, failed or lost): callers of {@code awaitWritten} and the writer wait. */
    private final Condition written = lock.newCondition();
    private ArrayList<JsonLine.Line> queue = new ArrayList<>();
    private ArrayList<JsonLine.Line> spare = new ArrayList<>();
    private int queuedBytes;
    /** {@link System#nanoTime} when the oldest queued line was queued (the queue was empty before it). */
    private long firstQueuedNanos;
    /** Sequence number of the last line queued. */
    private long lastQueued;
    /** Sequence number of the last line handed to the OS (or lost); written under the lock, read without it too. */
    private volatile long lastWritten;
    private boolean closed;
    private boolean overflowing;
    /** Set while a thread writes a batch: the claim; nobody else takes lines from the queue meanwhile. */
    private boolean writing;
    /** Set while the writer thread waits for a first line: only then does {@code emit} signal it. */
    private boolean writerIdle;
    /** Set while the writer thread waits for the oldest line's time: {@code emit} signals it past SWEEP_BYTES. */
    private boolean writerSweeping;
    /** Set when a write failed unexpectedly: events are then dropped at once. */
    private boolean writerDead;
    private final Thread writer;

    private JsonlAuditSink(AuditFile output, Consumer<String> onDrop, int maxQueuedBytes, long awaitMillis,
                           long sweepMillis) {
        this.output = output;
        this.maxQueuedBytes = maxQueuedBytes;
        this.awaitNanos = TimeUnit.MILLISECONDS.toNanos(awaitMillis);
        this.sweepNanos = TimeUnit.MILLISECONDS.toNanos(sweepMillis);
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
     * @param stream the stream; not closed by {@link #close()}; written by the writer thread and by callers of
     *     {@link #awaitWritten}, one at a time
     * @param onDrop told the reason of each event not written ({@code overflow}, {@code write_error},
     *     {@code closed}, {@code writer_failed}); called on the emitter's or a writing thread, must not block;
     *     {@code null} for none
     */
    public static JsonlAuditSink toStream(OutputStream stream, Consumer<String> onDrop) {
        return toStream(stream, onDrop, MAX_QUEUED_BYTES, MAX_AWAIT_MILLIS, SWEEP_MILLIS);
    }

    /** {@link #toStream(OutputStream, Consumer)} with other bounds (tests). */
    static JsonlAuditSink toStream(OutputStream stream, Consumer<String> onDrop, int maxQueuedBytes,
                                   long awaitMillis, long sweepMillis) {
        JsonlAuditSink sink = new JsonlAuditSink(AuditFile.ofStream(stream), onDrop, maxQueuedBytes, awaitMillis,
                sweepMillis);
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
     *     {@code closed}, {@code writer_failed}); called on the emitter's or a writing thread, must not block;
     *     {@code null} for none
     * @return the sink
     * @throws IOException if the file cannot be opened
     * @throws IllegalArgumentException if {@code maxBytes} is below 1024
     */
    public static JsonlAuditSink toFile(Path file, long maxBytes, Clock clock, Consumer<String> onDrop)
            throws IOException {
        return toFile(file, maxBytes, clock, onDrop, SWEEP_MILLIS);
    }

    /** {@link #toFile(Path, long, Clock, Consumer)} with another sweep time (tests). */
    static JsonlAuditSink toFile(Path file, long maxBytes, Clock clock, Consumer<String> onDrop, long sweepMillis)
            throws IOException {
        if (maxBytes < 1024) {
            throw new IllegalArgumentException("audit log size limit " + maxBytes + " bytes is below 1024");
        }
        Objects.requireNonNull(clock, "clock");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        JsonlAuditSink sink = new JsonlAuditSink(AuditFile.ofFile(file, maxBytes, clock), onDrop, MAX_QUEUED_BYTES,
                MAX_AWAIT_MILLIS, sweepMillis);
        sink.writer.start();
        return sink;
    }

    @Override
    public long emit(JsonObject event) {
        // encoded once, on the caller's thread; the writing thread only copies bytes
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
                if (queue.isEmpty()) {
                    firstQueuedNanos = System.nanoTime();
                }
                queue.add(line);
                queuedBytes += line.length();
                sequence = ++lastQueued;
                // a sweeping writer, or a caller of awaitWritten, takes this line without being told
                if (writerIdle || (writerSweeping && queuedBytes >= SWEEP_BYTES)) {
                    writerIdle = false;
                    writerSweeping = false;
                    queued.signal();
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
     * error, a failed write). Returns at once, without taking the lock, when it has been already. Otherwise writes the
     * queued lines itself when no other thread is writing, and waits at most {@value #MAX_AWAIT_MILLIS} ms for a
     * write by another thread.
     */
    @Override
    public boolean awaitWritten(long sequence) {
        if (sequence <= lastWritten) {
            return true;
        }
        Throwable failure = null;
        lock.lock();
        try {
            long deadline = System.nanoTime() + awaitNanos;
            boolean interrupted = false;
            while (lastWritten < sequence && !writerDead) {
                long nanos = deadline - System.nanoTime();
                if (!writing) {
                    failure = writeQueued(); // the line is queued: nobody else is writing
                } else if (nanos > 0) {
                    try {
                        written.awaitNanos(nanos);
                    } catch (InterruptedException e) {
                        interrupted = true; // the lines are queued: they are written whatever the caller does
                    }
                } else {
                    break;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return lastWritten >= sequence || writerDead;
        } finally {
            lock.unlock();
            if (failure != null) {
                failed(failure, false); // never into the request path, an Error neither
            }
        }
    }

    /**
     * Takes the writing claim and every queued line, writes them with the lock released, and publishes the result.
     * Called, and returns, with the lock held and nobody writing.
     *
     * @return the unexpected failure of the write (the sink is then dead), or {@code null}
     */
    private Throwable writeQueued() {
        writing = true;
        ArrayList<JsonLine.Line> batch = queue;
        queue = spare;
        queuedBytes = 0;
        overflowing = false;
        long upTo = lastQueued;
        lock.unlock();
        Throwable failure = null;
        try {
            if (!output.write(batch)) {
                dropped("write_error", batch.size()); // the batch did not reach the OS as a whole
            }
        } catch (Throwable t) {
            failure = t;
        } finally {
            lock.lock();
        }
        writing = false;
        if (failure != null) {
            writerDead = true;
            int lost = batch.size() + queue.size();
            queue.clear();
            queuedBytes = 0;
            // counted before anyone waiting is released: a caller of awaitWritten then sees the loss counted
            dropped("writer_failed", lost);
            queued.signal(); // the writer thread, if waiting, ends
        } else {
            lastWritten = upTo;
        }
        batch.clear();
        spare = batch;
        written.signalAll();
        return failure;
    }

    /**
     * Reports an unexpected write failure, outside the lock; on the writer thread ({@code rethrow}) rethrows an
     * {@link Error} but a stack overflow, so that the thread ends on it.
     */
    private static void failed(Throwable t, boolean rethrow) {
        LOG.log(System.Logger.Level.ERROR, "the audit log writer stopped (" + t.getClass().getSimpleName()
                + "); audit events are dropped and counted from now on");
        if (rethrow && t instanceof Error e && !(t instanceof StackOverflowError)) {
            throw e;
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

    /** The writer thread: writes the lines nobody waited for, and everything queued at close. */
    private void writeLoop() {
        Throwable failure = null;
        lock.lock();
        try {
            while (!writerDead && failure == null) {
                if (writing) {
                    written.awaitUninterruptibly(); // a caller of awaitWritten writes: its batch is its own
                } else if (queue.isEmpty()) {
                    if (closed) {
                        return;
                    }
                    writerIdle = true;
                    queued.awaitUninterruptibly();
                    writerIdle = false;
                } else {
                    long wait = firstQueuedNanos + sweepNanos - System.nanoTime();
                    if (wait > 0 && !closed && queuedBytes < SWEEP_BYTES) {
                        writerSweeping = true;
                        awaitQuietly(wait);
                        writerSweeping = false;
                    } else {
                        failure = writeQueued();
                    }
                }
            }
        } finally {
            lock.unlock();
            if (failure != null) {
                failed(failure, true);
            }
        }
    }

    private void awaitQuietly(long nanos) {
        try {
            queued.awaitNanos(nanos);
        } catch (InterruptedException e) {
            // the writer thread is interrupted by nobody; it stops only at close
        }
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
            output.close();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "closing the audit log failed: {0}", e.getClass().getSimpleName());
        }
    }
}
