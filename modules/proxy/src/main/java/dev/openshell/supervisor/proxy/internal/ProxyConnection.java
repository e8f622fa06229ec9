package dev.openshell.supervisor.proxy.internal;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.concurrency.limits.Limit;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.NioSocket;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.spi.ServerConnection;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;

/**
 * A Helidon {@link ServerConnection} that serves one client connection of the proxy listener with the proxy's own
 * strict HTTP/1.1 handling ({@link ProxySession}). Helidon keeps the listener, the virtual thread per connection,
 * idle-timeout and shutdown handling.
 */
final class ProxyConnection implements ServerConnection {
    private final ConnectionContext ctx;
    private final ProxyCore core;
    private final ConnectionState state = new ConnectionState();
    private final dev.openshell.supervisor.proxy.ClientConnection connection;

    ProxyConnection(ConnectionContext ctx, ProxyCore core) {
        this.ctx = ctx;
        this.core = core;
        this.connection = connection(ctx, core);
    }

    @Override
    public void handle(Limit limit) {
        InetAddress client = ctx.serverSocket().remotePeer().address() instanceof InetSocketAddress a
                ? a.getAddress() : null;
        ConnectionLimits.Claim claim = core.connections().acquire(client, () -> core.owner(connection));
        String refused = claim.refusal();
        if (refused != null) {
            // closed before a byte is read: nothing of this connection is held
            core.report(dev.openshell.supervisor.proxy.ProxyRefusal.Kind.LIMIT, 0, refused,
                    java.util.Optional.empty(), switch (refused) {
                        case "client_connection_limit" ->
                                "closed unserved: this client address has as many connections open as it may";
                        case "process_connection_limit" -> "closed unserved: this process has as many connections"
                                + " open beyond its address's share as it may";
                        default -> "closed unserved: the proxy has as many connections open as it may";
                    },
                    connection, java.util.Optional.empty(), java.util.Optional.empty(),
                    java.util.Optional.empty());
            closeSocket();
            return;
        }
        try {
            serve();
        } finally {
            // Helidon closes the socket once this returns: what was reported about the connection is written first
            connection.auditBarrier().await();
            core.connections().release(claim.slot());
        }
    }

    private void serve() {
        HttpInput in = new HttpInput(new ReaderStream(ctx.dataReader(), ctx.serverSocket()));
        OutputStream out = new BufferedOutputStream(new WriterStream(ctx.dataWriter(), connection.auditBarrier()),
                16 * 1024);
        try {
            new ProxySession(core, in, out, this::closeSocket, state, connection).loop();
        } catch (IOException | UncheckedIOException e) {
            // the client went away, or the read watchdog answered and cut the reads off (the connection lingers)
        }
        try {
            out.flush();
        } catch (IOException | UncheckedIOException ignored) {
            // the client went away
        }
        if (state.lingers()) {
            connection.auditBarrier().await(); // the timer closes the socket without waiting
            LingeringClose.end(in, state, core.watchdog(), this::closeSocketNow);
        }
    }

    /** {@return the connection as the accepted socket reports its addresses, with its audit barrier} */
    private static dev.openshell.supervisor.proxy.ClientConnection connection(ConnectionContext ctx, ProxyCore core) {
        return new dev.openshell.supervisor.proxy.ClientConnection(inet(() -> ctx.remotePeer().address()),
                inet(() -> ctx.localPeer().address()), core.newAuditBarrier());
    }

    private static java.util.Optional<java.net.InetSocketAddress> inet(
            java.util.function.Supplier<java.net.SocketAddress> address) {
        try {
            return address.get() instanceof java.net.InetSocketAddress a && !a.isUnresolved()
                    ? java.util.Optional.of(a) : java.util.Optional.empty();
        } catch (RuntimeException e) {
            return java.util.Optional.empty(); // the socket closed already
        }
    }

    @Override
    public Duration idleTime() {
        return state.idleTime();
    }

    @Override
    public void close(boolean interrupt) {
        state.drain();
        if (interrupt || !state.isBusy()) {
            closeSocket();
        }
    }

    private void closeSocket() {
        // what was reported about the connection is written before the client sees it close
        connection.auditBarrier().await();
        closeSocketNow();
    }

    private void closeSocketNow() {
        try {
            ctx.serverSocket().close();
        } catch (RuntimeException ignored) {
            // already closed
        }
    }

    /**
     * Helidon's reader as a stream; end of data is -1, socket failures are IOExceptions.
     *
     * <p>On Helidon's plain (non-TLS) NIO socket, once the reader has handed out what it buffered while the connection
     * was chosen, the stream reads the socket itself ({@link HelidonSocket#read(BufferData)}) into one buffer of its
     * own, reused: the reader's way ({@code NioSocket.get()}) makes a new array of every read, up to 8 KiB each, which
     * was a third to a half of the bytes allocated while buffering 1 MiB bodies (docs/BENCHMARKS.md, issue 41, "POST 1
     * MiB"). That read reads the channel only when the socket's own buffer has nothing left, and that buffer holds
     * stale bytes (zeros, or the last {@code get()}'s) until a read takes them: the first direct read takes and drops
     * them. From then on the reader is never asked again: its {@code get()} expects the buffer cleared, and a direct
     * read leaves it drained. {@code ReaderStreamTest} pins this reading of Helidon's socket.
     */
    static final class ReaderStream extends InputStream {
        /** The socket's own read buffer's size in Helidon 4 ({@code NioSocket}), in bytes. */
        private static final int SOCKET_BUFFER = 8 * 1024;
        private final DataReader reader;
        /** The socket, when it is read directly; {@code null}: every read goes through {@link #reader}. */
        private final HelidonSocket socket;
        /** What the last direct read brought, not yet consumed; {@code null} when reads go through the reader. */
        private final BufferData direct;
        /** Whether the socket's stale buffer was taken (the first direct read). */
        private boolean drained;

        ReaderStream(DataReader reader, HelidonSocket socket) {
            this.reader = reader;
            // exactly Helidon's plain NIO socket: a TLS socket's read is another algorithm, and this reading of the
            // buffer's state is NioSocket's own
            boolean plain = socket != null && socket.getClass() == NioSocket.class;
            this.socket = plain ? socket : null;
            this.direct = plain ? BufferData.create(2 * SOCKET_BUFFER).reset() : null;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            try {
                if (direct != null && reader.available() == 0) {
                    return readDirect(b, off, len);
                }
                reader.ensureAvailable();
                int n = Math.min(len, reader.available());
                // a view of the reader's own arrays: one copy, into the caller's buffer
                BufferData view = reader.readBuffer(n);
                int copied = 0;
                while (copied < n) {
                    int r = view.read(b, off + copied, n - copied);
                    if (r <= 0) {
                        break;
                    }
                    copied += r;
                }
                return copied;
            } catch (DataReader.InsufficientDataAvailableException e) {
                return -1;
            } catch (UncheckedIOException e) {
                throw e.getCause();
            } catch (RuntimeException e) {
                throw new IOException("client connection failed", e);
            }
        }

        /**
         * Reads from what the last socket read brought, reading the socket when that is used up. Helidon 4.5 marks
         * {@link HelidonSocket#read(BufferData)} for removal (its readers use {@code get()}); {@code ReaderStreamTest}
         * fails to compile or to pass the day it goes or changes, and then the reader's way is the only one.
         */
        @SuppressWarnings("removal")
        private int readDirect(byte[] b, int off, int len) {
            if (direct.available() == 0) {
                if (!drained) {
                    direct.reset();
                    socket.read(direct); // the socket buffer's stale bytes, without reading the channel: dropped
                    drained = true;
                }
                direct.reset();
                // a blocking read into free space: 0 only at end of stream (NioSocket drops the channel's -1)
                if (socket.read(direct) <= 0) {
                    return -1;
                }
            }
            return direct.read(b, off, len);
        }
    }

    /**
     * Helidon's writer as a stream; every write goes to the socket at once, after the connection's
     * {@link dev.openshell.supervisor.proxy.AuditBarrier} (the audit lines about the connection are written first).
     */
    private static final class WriterStream extends OutputStream {
        private final DataWriter writer;
        private final dev.openshell.supervisor.proxy.AuditBarrier barrier;

        WriterStream(DataWriter writer, dev.openshell.supervisor.proxy.AuditBarrier barrier) {
            this.writer = writer;
            this.barrier = barrier;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            barrier.await();
            try {
                writer.writeNow(BufferData.create(Arrays.copyOfRange(b, off, off + len)));
            } catch (UncheckedIOException e) {
                throw e.getCause();
            } catch (RuntimeException e) {
                throw new IOException("client connection failed", e);
            }
        }
    }
}
