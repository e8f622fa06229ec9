package dev.openshell.supervisor.proxy.internal;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.buffers.DataReader;
import io.helidon.common.buffers.DataWriter;
import io.helidon.common.concurrency.limits.Limit;
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
        HttpInput in = new HttpInput(new ReaderStream(ctx.dataReader()));
        OutputStream out = new BufferedOutputStream(new WriterStream(ctx.dataWriter(), connection.auditBarrier()),
                16 * 1024);
        try {
            new ProxySession(core, in, out, this::closeSocket, state, connection).loop();
        } catch (IOException | UncheckedIOException e) {
            // the client went away
        } finally {
            try {
                out.flush();
            } catch (IOException | UncheckedIOException ignored) {
                // the client went away
            }
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
        try {
            ctx.serverSocket().close();
        } catch (RuntimeException ignored) {
            // already closed
        }
    }

    /** Helidon's reader as a stream; end of data is -1, socket failures are IOExceptions. */
    private static final class ReaderStream extends InputStream {
        private final DataReader reader;

        ReaderStream(DataReader reader) {
            this.reader = reader;
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
