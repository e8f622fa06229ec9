package dev.openshell.supervisor.audit;

import jakarta.json.JsonObject;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Writes each event as one JSON line (JSONL), to standard output or to a file.
 *
 * <p>A file is rotated when the UTC day changes and when it would grow past {@code maxBytes}: the current file is
 * renamed {@code <name>.<yyyyMMdd'T'HHmmss'Z'>[.<n>]} beside it and a new one started; rotated files are kept (the
 * operator's shipper owns them). Lines are written in the order {@link #emit} takes the lock and are flushed to the
 * operating system before the lock is given up by the last of the callers waiting for it ("group commit"): a caller
 * alone flushes its own line before {@code emit} returns; under load, callers queued on the lock share one flush, so
 * the file sees one write system call per burst instead of one per event. A line is therefore never left in the
 * buffer once no emitter is running, and a crash of the JVM loses at most the lines of the burst being written.
 * Write errors never reach the caller: the event is counted in {@link #dropped()} and one warning is logged per
 * failure streak.
 */
public final class JsonlAuditSink implements AuditSink {
    /** Default size limit of one file before rotation: 100 MiB. */
    public static final long DEFAULT_MAX_BYTES = 100L * 1024 * 1024;
    private static final int BUFFER_BYTES = 16 * 1024;
    private static final long MILLIS_PER_DAY = 86_400_000L;
    private static final System.Logger LOG = System.getLogger(JsonlAuditSink.class.getName());
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    private final ReentrantLock lock = new ReentrantLock();
    private final Path file;
    private final long maxBytes;
    private final Clock clock;
    private final AtomicLong dropped = new AtomicLong();
    /** Callers inside {@link #emit} (waiting for the lock or holding it): the last one out flushes. */
    private final AtomicInteger pending = new AtomicInteger();
    private OutputStream out;
    private long size;
    private LocalDate day;
    private boolean failing;
    private boolean closed;

    private JsonlAuditSink(Path file, OutputStream out, long maxBytes, Clock clock) {
        this.file = file;
        this.out = out;
        this.maxBytes = maxBytes;
        this.clock = clock;
    }

    /**
     * {@return a sink writing to {@code stream} (standard output, typically); never rotated}
     *
     * @param stream the stream; not closed by {@link #close()}
     */
    public static JsonlAuditSink toStream(OutputStream stream) {
        OutputStream w = new BufferedOutputStream(new NonClosingStream(stream), BUFFER_BYTES);
        return new JsonlAuditSink(null, w, Long.MAX_VALUE, Clock.systemUTC());
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
        if (maxBytes < 1024) {
            throw new IllegalArgumentException("audit log size limit " + maxBytes + " bytes is below 1024");
        }
        Objects.requireNonNull(clock, "clock");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        JsonlAuditSink sink = new JsonlAuditSink(file, null, maxBytes, clock);
        sink.open();
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
    public void emit(JsonObject event) {
        // encoded once, outside the lock; the line and its newline go out in one buffered write
        byte[] line = JsonLine.encode(event);
        pending.incrementAndGet();
        lock.lock();
        boolean counted = false;
        try {
            if (closed) {
                dropped.incrementAndGet();
                return;
            }
            if (file != null) {
                long bytes = line.length;
                long today = Math.floorDiv(clock.millis(), MILLIS_PER_DAY); // the UTC day, without a LocalDate
                if ((size > 0 && size + bytes > maxBytes) || today != day.toEpochDay()) {
                    out.flush();
                    rotate(LocalDate.ofEpochDay(today));
                }
                size += bytes;
            }
            out.write(line);
            // group commit: a caller already queued on the lock writes after us and flushes for both
            counted = true;
            if (pending.decrementAndGet() == 0) {
                out.flush();
            }
            if (failing) {
                failing = false;
                LOG.log(System.Logger.Level.INFO, "audit log writable again");
            }
        } catch (IOException e) {
            dropped.incrementAndGet();
            if (!failing) {
                failing = true;
                LOG.log(System.Logger.Level.WARNING, "audit event not written ({0}); counting dropped events",
                        e.getClass().getSimpleName());
            }
        } finally {
            if (!counted && pending.decrementAndGet() == 0 && !closed) {
                try {
                    out.flush(); // earlier callers' lines may wait for this flush
                } catch (IOException ignored) {
                    // already counted above
                }
            }
            lock.unlock();
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

    /** {@return the number of events that could not be written} */
    public long dropped() {
        return dropped.get();
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (!closed) {
                closed = true;
                out.close();
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "closing the audit log failed: {0}", e.getClass().getSimpleName());
        } finally {
            lock.unlock();
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
        }

        @Override
        public void close() throws IOException {
            delegate.flush();
        }
    }
}
