package dev.openshell.supervisor.it;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import javax.net.ssl.SSLContext;

/**
 * The two peers of a WebSocket session through the supervisor, for end-to-end tests: a client that upgrades through
 * the proxy and sends masked frames, and an upstream on 127.0.0.1 that answers 101 and records each frame it gets
 * (unmasked), and can send unmasked text frames to the client. RFC 6455 framing only; no extension.
 */
final class WsPeers {
    private WsPeers() {
    }

    /**
     * One frame as received.
     *
     * @param opcode the opcode (1 text, 2 binary, 8 close, -1 the end of the stream)
     * @param fin whether it is final
     * @param payload the unmasked payload
     */
    record Frame(int opcode, boolean fin, byte[] payload) {
        String text() {
            return new String(payload, StandardCharsets.UTF_8);
        }

        int closeCode() {
            return payload.length >= 2 ? ((payload[0] & 0xFF) << 8) | (payload[1] & 0xFF) : -1;
        }
    }

    /** {@return a frame: masked toward the upstream (client side), unmasked toward the client} */
    static byte[] frame(int opcode, boolean fin, byte[] payload, boolean masked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write((fin ? 0x80 : 0) | opcode);
        int m = masked ? 0x80 : 0;
        if (payload.length < 126) {
            out.write(m | payload.length);
        } else if (payload.length <= 0xFFFF) {
            out.write(m | 126);
            out.write(payload.length >> 8);
            out.write(payload.length);
        } else {
            out.write(m | 127);
            for (int i = 7; i >= 0; i--) {
                out.write(i >= 4 ? 0 : (payload.length >>> (8 * i)) & 0xFF);
            }
        }
        byte[] p = payload.clone();
        if (masked) {
            byte[] key = {0x37, (byte) 0xfa, 0x21, 0x3d};
            out.write(key, 0, 4);
            for (int i = 0; i < p.length; i++) {
                p[i] ^= key[i & 3];
            }
        }
        out.write(p, 0, p.length);
        return out.toByteArray();
    }

    static byte[] text(String s, boolean masked) {
        return frame(1, true, s.getBytes(StandardCharsets.UTF_8), masked);
    }

    /** {@return the next frame on {@code in}, or an end marker (opcode -1)} */
    static Frame read(InputStream in) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            return new Frame(-1, true, new byte[0]);
        }
        int b1 = in.read();
        if (b1 < 0) {
            return new Frame(-1, true, new byte[0]);
        }
        long len = b1 & 0x7F;
        if (len == 126) {
            len = (in.read() << 8) | in.read();
        } else if (len == 127) {
            len = 0;
            for (int i = 0; i < 8; i++) {
                len = (len << 8) | in.read();
            }
        }
        byte[] key = (b1 & 0x80) != 0 ? in.readNBytes(4) : null;
        byte[] p = in.readNBytes((int) len);
        if (p.length != len) {
            throw new EOFException("the stream ended inside a frame");
        }
        if (key != null) {
            for (int i = 0; i < p.length; i++) {
                p[i] ^= key[i & 3];
            }
        }
        return new Frame(b0 & 0x0F, (b0 & 0x80) != 0, p);
    }

    static String head(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        while (!b.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            b.append((char) c);
        }
        return b.toString();
    }

    /** A client of the supervisor's proxy port. */
    static final class Client implements AutoCloseable {
        final Socket socket;
        final String response;

        Client(int proxyPort, String host, int upstreamPort, String extraHeaders) throws IOException {
            this(proxyPort, host, upstreamPort, extraHeaders, "127.0.0.1");
        }

        /** @param localAddress the loopback address the client connects from (another client address) */
        Client(int proxyPort, String host, int upstreamPort, String extraHeaders, String localAddress)
                throws IOException {
            socket = new Socket(InetAddress.getByName("127.0.0.1"), proxyPort, InetAddress.getByName(localAddress), 0);
            socket.setSoTimeout(30_000);
            String authority = host + ":" + upstreamPort;
            socket.getOutputStream().write(("GET http://" + authority + "/realtime HTTP/1.1\r\nHost: " + authority
                    + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n" + extraHeaders + "\r\n").getBytes(StandardCharsets.US_ASCII));
            socket.getOutputStream().flush();
            response = head(socket.getInputStream());
        }

        boolean upgraded() {
            return response.startsWith("HTTP/1.1 101");
        }

        void send(byte[] frame) throws IOException {
            socket.getOutputStream().write(frame);
            socket.getOutputStream().flush();
        }

        Frame read() throws IOException {
            return WsPeers.read(socket.getInputStream());
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /**
     * A server socket on 127.0.0.1, plain or TLS, that hands each connection to {@code serve} on its own virtual
     * thread until closed.
     */
    static final class Acceptor implements AutoCloseable {
        private final ServerSocket server;

        /**
         * @param tls the server's TLS context, or {@code null} for plain TCP
         * @param serve what serves one connection (and closes it)
         */
        Acceptor(SSLContext tls, Consumer<Socket> serve) throws IOException {
            server = tls == null ? new ServerSocket(0, 50, InetAddress.getLoopbackAddress())
                    : tls.getServerSocketFactory().createServerSocket(0, 50, InetAddress.getLoopbackAddress());
            Thread.ofVirtual().start(() -> accept(serve));
        }

        int port() {
            return server.getLocalPort();
        }

        private void accept(Consumer<Socket> serve) {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    Thread.ofVirtual().start(() -> serve.accept(s));
                } catch (IOException e) {
                    return;
                }
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
        }
    }

    /** An upstream that accepts every WebSocket upgrade. */
    static final class Upstream implements AutoCloseable {
        final LinkedBlockingQueue<String> heads = new LinkedBlockingQueue<>();
        /** The frames of the latest connection (each connection has its own queue). */
        volatile LinkedBlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
        /** Header lines added to the 101 (each ending in CRLF), for an upstream that breaks the handshake. */
        volatile String extra101 = "";
        private final LinkedBlockingQueue<OutputStream> outs = new LinkedBlockingQueue<>();
        private volatile OutputStream last;
        private volatile Socket lastSocket;
        private final Acceptor acceptor;

        Upstream() throws IOException {
            acceptor = new Acceptor(null, this::serve);
        }

        int port() {
            return acceptor.port();
        }

        private void serve(Socket s) {
            LinkedBlockingQueue<Frame> mine = new LinkedBlockingQueue<>();
            try (s) {
                InputStream in = s.getInputStream();
                heads.add(head(in));
                frames = mine;
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n" + extra101 + "\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                last = out;
                lastSocket = s;
                outs.add(out);
                while (true) {
                    Frame f = read(in);
                    mine.add(f);
                    if (f.opcode() == -1 || f.opcode() == 8) {
                        return;
                    }
                }
            } catch (IOException e) {
                mine.add(new Frame(-1, true, new byte[0]));
            }
        }

        /** Waits for the session's upgrade to be answered. */
        void awaitSession() throws InterruptedException {
            if (outs.poll(30, TimeUnit.SECONDS) == null) {
                throw new AssertionError("no upgrade reached the upstream");
            }
        }

        /** Sends a raw frame to the last session's client. */
        synchronized void send(byte[] frame) throws IOException {
            last.write(frame);
            last.flush();
        }

        /** Drops the last session's connection without a close frame. */
        void disconnect() throws IOException {
            lastSocket.close();
        }

        Frame next() throws InterruptedException {
            Frame f = frames.poll(30, TimeUnit.SECONDS);
            if (f == null) {
                throw new AssertionError("no frame reached the upstream");
            }
            return f;
        }

        /** {@return the next text frame's text, past the ends of earlier sessions' connections} */
        String nextText() throws InterruptedException {
            while (true) {
                Frame f = next();
                if (f.opcode() == 1) {
                    return f.text();
                }
            }
        }

        @Override
        public void close() throws IOException {
            acceptor.close();
        }
    }
}
