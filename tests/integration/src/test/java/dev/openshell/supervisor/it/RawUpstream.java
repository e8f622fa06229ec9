package dev.openshell.supervisor.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.ExtendedSSLSession;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;

/**
 * An HTTP/1.1 upstream on 127.0.0.1 (plain or TLS) that records exactly the bytes of every request it receives
 * (request line, field lines and body as framed on the wire) and answers {@code 200 ok}. Keep-alive; one virtual
 * thread per connection; every read has a 60 s timeout, so nothing waits forever. {@link #holdNext()} makes the next
 * request wait for a release before it is answered (an in-flight request for shutdown tests).
 */
final class RawUpstream implements AutoCloseable {
    private static final int MAX_HEAD = 1 << 20;
    private static final byte[] SWITCHING = ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
            + "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    private static final byte[] REPLY = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
            .getBytes(StandardCharsets.US_ASCII);

    /**
     * One request as received.
     *
     * @param raw every byte of the request, as received
     * @param requestLine the request line
     * @param headers field names (lowercase) to values, in order
     * @param body the body (chunked bodies decoded)
     * @param sni the TLS server name the client asked for, if any
     */
    record Received(byte[] raw, String requestLine, Map<String, List<String>> headers, byte[] body,
                    Optional<String> sni) {
        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }

        Optional<String> header(String name) {
            List<String> v = headers.get(name.toLowerCase(Locale.ROOT));
            return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v.get(0));
        }

        String rawText() {
            return new String(raw, StandardCharsets.ISO_8859_1);
        }
    }

    /** The next request to arrive waits until {@link #release()}. */
    static final class Hold {
        private final CountDownLatch arrived = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);

        /** Waits (at most 30 s) for the held request. @return whether it arrived */
        boolean awaitArrival() throws InterruptedException {
            return arrived.await(30, TimeUnit.SECONDS);
        }

        void release() {
            released.countDown();
        }
    }

    private final ServerSocket server;
    private final boolean tls;
    private final LinkedBlockingQueue<Received> received = new LinkedBlockingQueue<>();
    /** The bytes received after answering an {@code Upgrade: websocket} request with 101, per read. */
    private final LinkedBlockingQueue<byte[]> upgraded = new LinkedBlockingQueue<>();
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicReference<Hold> hold = new AtomicReference<>();
    private final List<Socket> open = new ArrayList<>();

    private RawUpstream(ServerSocket server, boolean tls) {
        this.server = server;
        this.tls = tls;
        Thread.ofVirtual().name("raw-upstream-accept").start(this::acceptLoop);
    }

    /** {@return a plain HTTP upstream on a free loopback port} */
    static RawUpstream plain() throws IOException {
        return plain(0);
    }

    /** {@return a plain HTTP upstream on 127.0.0.1:port (0: a free port)} @throws IOException if it is taken */
    static RawUpstream plain(int port) throws IOException {
        return new RawUpstream(new ServerSocket(port, 64, InetAddress.getByName("127.0.0.1")), false);
    }

    /** {@return an HTTPS upstream on a free loopback port, with the certificate of {@code context}} */
    static RawUpstream tls(SSLContext context) throws IOException {
        return tls(context, 0);
    }

    /** {@return an HTTPS upstream on 127.0.0.1:port (0: a free port)} @throws IOException if it is taken */
    static RawUpstream tls(SSLContext context, int port) throws IOException {
        SSLServerSocket s = (SSLServerSocket) context.getServerSocketFactory()
                .createServerSocket(port, 64, InetAddress.getByName("127.0.0.1"));
        var params = s.getSSLParameters();
        params.setApplicationProtocols(new String[] {"http/1.1"});
        s.setSSLParameters(params);
        return new RawUpstream(s, true);
    }

    int port() {
        return server.getLocalPort();
    }

    /** {@return how many complete requests arrived so far} */
    int count() {
        return count.get();
    }

    /** {@return how many connections were accepted so far} */
    int connections() {
        return connections.get();
    }

    /** {@return the oldest request not yet taken; waits at most 30 s} */
    Received take() throws InterruptedException {
        Received r = received.poll(30, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("the upstream received no request within 30 s");
        }
        return r;
    }

    /**
     * {@return the next bytes an upgraded connection sent after the 101, waiting at most {@code millis}, or null}
     * (An {@code Upgrade: websocket} request is answered {@code 101 Switching Protocols}; everything after it is
     * recorded, not interpreted.)
     */
    byte[] upgradedBytes(long millis) throws InterruptedException {
        return upgraded.poll(millis, TimeUnit.MILLISECONDS);
    }

    /** {@return and forget every request not yet taken} */
    List<Received> drain() {
        List<Received> all = new ArrayList<>();
        received.drainTo(all);
        return all;
    }

    /** {@return a hold on the next request} */
    Hold holdNext() {
        Hold h = new Hold();
        if (!hold.compareAndSet(null, h)) {
            throw new IllegalStateException("a request is already held");
        }
        return h;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            Socket s;
            try {
                s = server.accept();
            } catch (IOException e) {
                return;
            }
            connections.incrementAndGet();
            synchronized (open) {
                open.add(s);
            }
            Thread.ofVirtual().name("raw-upstream-conn").start(() -> serve(s));
        }
    }

    private void serve(Socket s) {
        try (s) {
            s.setSoTimeout(60_000);
            s.setTcpNoDelay(true);
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            Optional<String> sni = Optional.empty();
            if (s instanceof SSLSocket ssl) {
                ssl.startHandshake();
                if (ssl.getSession() instanceof ExtendedSSLSession ext) {
                    sni = ext.getRequestedServerNames().stream().filter(n -> n instanceof SNIHostName)
                            .map(n -> ((SNIHostName) n).getAsciiName()).findFirst();
                }
            }
            while (true) {
                Received r = read(in, sni);
                if (r == null) {
                    return;
                }
                Hold h = hold.getAndSet(null);
                received.add(r);
                count.incrementAndGet();
                if (h != null) {
                    h.arrived.countDown();
                    if (!h.released.await(60, TimeUnit.SECONDS)) {
                        return;
                    }
                }
                if (r.header("upgrade").map(v -> v.equalsIgnoreCase("websocket")).orElse(false)) {
                    out.write(SWITCHING);
                    out.flush();
                    byte[] buf = new byte[8192];
                    for (int n; (n = in.read(buf)) > 0; ) {
                        upgraded.add(java.util.Arrays.copyOf(buf, n)); // every byte after the 101, as it came
                    }
                    return;
                }
                out.write(REPLY);
                out.flush();
                if (r.header("connection").map(v -> v.toLowerCase(Locale.ROOT).contains("close")).orElse(false)) {
                    return;
                }
            }
        } catch (IOException e) {
            // the peer went away or sent something this recorder does not parse: the connection ends
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Reads one request, or returns null at a clean end of stream before its first byte. */
    private static Received read(InputStream in, Optional<String> sni) throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                if (raw.size() == 0) {
                    return null;
                }
                throw new EOFException("end of stream inside the head");
            }
            raw.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
            if (raw.size() > MAX_HEAD) {
                throw new IOException("head too large");
            }
        }
        String head = raw.toString(StandardCharsets.ISO_8859_1);
        String[] lines = head.substring(0, head.length() - 4).split("\r\n", -1);
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon > 0) {
                headers.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        k -> new ArrayList<>()).add(lines[i].substring(colon + 1).trim());
            }
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        List<String> te = headers.getOrDefault("transfer-encoding", List.of());
        List<String> cl = headers.getOrDefault("content-length", List.of());
        if (!te.isEmpty() && te.get(te.size() - 1).toLowerCase(Locale.ROOT).endsWith("chunked")) {
            while (true) {
                String sizeLine = line(in, raw);
                int semi = sizeLine.indexOf(';');
                long size = Long.parseLong((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).trim(), 16);
                if (size == 0) {
                    while (!line(in, raw).isEmpty()) {
                        // trailer fields: recorded in raw, not interpreted
                    }
                    break;
                }
                byte[] data = in.readNBytes((int) size);
                if (data.length != size) {
                    throw new EOFException("end of stream inside chunk data");
                }
                raw.writeBytes(data);
                body.writeBytes(data);
                if (!line(in, raw).isEmpty()) {
                    throw new IOException("chunk data not followed by CRLF");
                }
            }
        } else if (!cl.isEmpty()) {
            int n = Integer.parseInt(cl.get(0));
            byte[] data = in.readNBytes(n);
            if (data.length != n) {
                throw new EOFException("end of stream inside the body");
            }
            raw.writeBytes(data);
            body.writeBytes(data);
        }
        return new Received(raw.toByteArray(), lines[0], headers, body.toByteArray(), sni);
    }

    /** Reads a CRLF-terminated line, appending its bytes to {@code raw}; returns it without the CRLF. */
    private static String line(InputStream in, ByteArrayOutputStream raw) throws IOException {
        StringBuilder b = new StringBuilder();
        int prev = -1;
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new EOFException("end of stream inside a line");
            }
            raw.write(c);
            if (prev == '\r' && c == '\n') {
                return b.substring(0, b.length() - 1);
            }
            b.append((char) c);
            prev = c;
            if (b.length() > MAX_HEAD) {
                throw new IOException("line too long");
            }
        }
    }

    boolean isTls() {
        return tls;
    }

    @Override
    public void close() throws IOException {
        server.close();
        Hold h = hold.getAndSet(null);
        if (h != null) {
            h.release();
        }
        synchronized (open) {
            for (Socket s : open) {
                try {
                    s.close();
                } catch (IOException e) {
                    // already closed
                }
            }
        }
    }
}
