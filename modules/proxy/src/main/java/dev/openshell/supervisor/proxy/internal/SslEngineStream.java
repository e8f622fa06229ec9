package dev.openshell.supervisor.proxy.internal;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;

/**
 * Blocking streams over an {@link SSLEngine} that runs on top of another pair of streams: the decrypted side of an
 * intercepted CONNECT tunnel. One thread may read while another writes (WebSocket relay); reads and writes are each
 * serialised.
 */
public final class SslEngineStream {
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    private final SSLEngine engine;
    private final InputStream rawIn;
    private final OutputStream rawOut;
    private final Object readLock = new Object();
    private final Object writeLock = new Object();
    private ByteBuffer netIn;
    private ByteBuffer appIn;
    private ByteBuffer netOut;
    private boolean inboundDone;
    private final InputStream in = new In();
    private final OutputStream out = new Out();

    /**
     * @param engine the engine, configured for its mode
     * @param rawIn the encrypted input
     * @param rawOut the encrypted output
     */
    public SslEngineStream(SSLEngine engine, InputStream rawIn, OutputStream rawOut) {
        this.engine = engine;
        this.rawIn = rawIn;
        this.rawOut = rawOut;
        int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
        this.appIn.flip();
        this.netOut = ByteBuffer.allocate(packet);
    }

    /** {@return the engine} */
    public SSLEngine engine() {
        return engine;
    }

    /** {@return the decrypted input} */
    public InputStream in() {
        return in;
    }

    /** {@return the plaintext output; bytes are encrypted on write and sent on flush} */
    public OutputStream out() {
        return out;
    }

    /**
     * Runs the handshake to completion.
     *
     * @throws SSLException when the handshake fails
     * @throws EOFException when the peer closes during the handshake
     */
    public void handshake() throws IOException {
        engine.beginHandshake();
        while (true) {
            switch (engine.getHandshakeStatus()) {
                case NEED_WRAP -> {
                    synchronized (writeLock) {
                        wrap(EMPTY);
                    }
                }
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    synchronized (writeLock) {
                        rawOut.flush(); // the peer must see our flight before it answers
                    }
                    synchronized (readLock) {
                        if (!unwrapOnce()) {
                            throw new EOFException("peer closed during the TLS handshake");
                        }
                    }
                }
                case NEED_TASK -> runTasks();
                default -> {
                    rawOut.flush();
                    return;
                }
            }
        }
    }

    /** Sends close_notify and flushes; errors are ignored. */
    public void closeOutbound() {
        synchronized (writeLock) {
            try {
                engine.closeOutbound();
                while (!engine.isOutboundDone()) {
                    wrap(EMPTY);
                }
                rawOut.flush();
            } catch (IOException | RuntimeException e) {
                // the peer is gone; nothing to tell it
            }
        }
    }

    private void runTasks() {
        Runnable t;
        while ((t = engine.getDelegatedTask()) != null) {
            t.run();
        }
    }

    /** Unwraps once; returns false at end of the raw stream or when inbound is closed. Caller holds readLock. */
    private boolean unwrapOnce() throws IOException {
        netIn.flip();
        appIn.compact();
        SSLEngineResult r;
        try {
            r = engine.unwrap(netIn, appIn);
        } finally {
            netIn.compact();
            appIn.flip();
        }
        switch (r.getStatus()) {
            case OK -> {
                return true;
            }
            case BUFFER_UNDERFLOW -> {
                if (!netIn.hasRemaining()) {
                    ByteBuffer bigger = ByteBuffer.allocate(netIn.capacity() * 2);
                    netIn.flip();
                    bigger.put(netIn);
                    netIn = bigger;
                }
                int n = rawIn.read(netIn.array(), netIn.arrayOffset() + netIn.position(), netIn.remaining());
                if (n < 0) {
                    inboundDone = true;
                    return false;
                }
                netIn.position(netIn.position() + n);
                return true;
            }
            case BUFFER_OVERFLOW -> {
                ByteBuffer bigger = ByteBuffer.allocate(appIn.capacity() + engine.getSession().getApplicationBufferSize());
                bigger.put(appIn);
                bigger.flip();
                appIn = bigger;
                return true;
            }
            case CLOSED -> {
                inboundDone = true;
                return false;
            }
            default -> throw new IllegalStateException("unknown SSLEngine status " + r.getStatus());
        }
    }

    /** Wraps {@code src} completely and writes the records; caller holds writeLock. */
    private void wrap(ByteBuffer src) throws IOException {
        do {
            netOut.clear();
            SSLEngineResult r = engine.wrap(src, netOut);
            switch (r.getStatus()) {
                case OK, CLOSED -> {
                    netOut.flip();
                    rawOut.write(netOut.array(), netOut.arrayOffset(), netOut.limit());
                    if (r.getStatus() == SSLEngineResult.Status.CLOSED && src.hasRemaining()) {
                        throw new SSLException("TLS connection closed");
                    }
                    if (r.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                        runTasks();
                    }
                }
                case BUFFER_OVERFLOW -> netOut = ByteBuffer.allocate(netOut.capacity() * 2);
                default -> throw new IllegalStateException("unexpected wrap status " + r.getStatus());
            }
            if (r.getStatus() == SSLEngineResult.Status.CLOSED) {
                return;
            }
        } while (src.hasRemaining());
    }

    private final class In extends InputStream {
        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            synchronized (readLock) {
                while (!appIn.hasRemaining()) {
                    if (inboundDone) {
                        return -1;
                    }
                    SSLEngineResult.HandshakeStatus hs = engine.getHandshakeStatus();
                    if (hs == SSLEngineResult.HandshakeStatus.NEED_TASK) {
                        runTasks();
                        continue;
                    }
                    if (hs == SSLEngineResult.HandshakeStatus.NEED_WRAP) {
                        synchronized (writeLock) {
                            wrap(EMPTY);
                            rawOut.flush();
                        }
                        continue;
                    }
                    if (!unwrapOnce() && !appIn.hasRemaining()) {
                        return -1;
                    }
                }
                int n = Math.min(len, appIn.remaining());
                appIn.get(b, off, n);
                return n;
            }
        }

        @Override
        public int available() {
            synchronized (readLock) {
                return appIn.remaining();
            }
        }
    }

    private final class Out extends OutputStream {
        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            synchronized (writeLock) {
                wrap(ByteBuffer.wrap(b, off, len));
            }
        }

        @Override
        public void flush() throws IOException {
            synchronized (writeLock) {
                rawOut.flush();
            }
        }

        @Override
        public void close() {
            closeOutbound();
        }
    }
}
