package dev.openshell.supervisor.audit;

import java.io.BufferedOutputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;

/**
 * The output side of {@link JsonlAuditSink}: the stream (a file, rotated, or a stream it was given), written one batch
 * of lines at a time. Not thread-safe: the sink lets one thread at a time write (its {@code writing} claim), and the
 * claim's lock hand-over makes each writer see the state the previous one left.
 *
 * <p>The file is opened as a {@link FileOutputStream}, not a channel: a batch may be written by a request thread
 * waiting for its lines, and an interrupt of that thread must not close the log (an interrupted channel closes).
 */
final class AuditFile {
    private static final int BUFFER_BYTES = 64 * 1024;
    private static final long MILLIS_PER_DAY = 86_400_000L;
    private static final System.Logger LOG = System.getLogger(JsonlAuditSink.class.getName());
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);

    private final Path file;
    private final long maxBytes;
    private final Clock clock;
    private OutputStream out;
    private long size;
    private LocalDate day;
    private boolean failing;

    private AuditFile(Path file, OutputStream out, long maxBytes, Clock clock) {
        this.file = file;
        this.out = out;
        this.maxBytes = maxBytes;
        this.clock = clock;
    }

    /** {@return the output to {@code stream}, never rotated; {@link #close()} flushes it but leaves it open} */
    static AuditFile ofStream(OutputStream stream) {
        return new AuditFile(null, new BufferedOutputStream(new NonClosingStream(stream), BUFFER_BYTES),
                Long.MAX_VALUE, Clock.systemUTC());
    }

    /**
     * {@return the output to {@code file}, opened for appending, rotated past {@code maxBytes} and at a new UTC day}
     *
     * @throws IOException if the file cannot be opened
     */
    static AuditFile ofFile(Path file, long maxBytes, Clock clock) throws IOException {
        AuditFile f = new AuditFile(file, null, maxBytes, clock);
        f.out = newFileStream(file);
        f.size = Files.size(file);
        f.day = LocalDate.now(clock.withZone(ZoneOffset.UTC));
        if (f.size > 0) {
            LocalDate modified = LocalDate.ofInstant(Files.getLastModifiedTime(file).toInstant(), ZoneOffset.UTC);
            if (modified.isBefore(f.day)) {
                f.day = modified; // a file left from an earlier day rotates on the first write
            }
        }
        return f;
    }

    private static OutputStream newFileStream(Path file) throws IOException {
        return new BufferedOutputStream(new FileOutputStream(file.toFile(), true), BUFFER_BYTES);
    }

    /**
     * Writes one batch and flushes it.
     *
     * @return {@code true} when the batch reached the operating system; {@code false} on an I/O error (the caller
     *     counts every line of the batch as lost: it did not reach the operating system as a whole)
     */
    boolean write(List<JsonLine.Line> batch) {
        if (batch.isEmpty()) {
            return true;
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
            return true;
        } catch (IOException e) {
            if (!failing) {
                failing = true;
                LOG.log(System.Logger.Level.WARNING, "audit event not written ({0}); counting dropped events",
                        e.getClass().getSimpleName());
            }
            return false;
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

    /** Flushes and closes the file (a stream given to {@link #ofStream} is flushed only). */
    void close() throws IOException {
        out.close();
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
