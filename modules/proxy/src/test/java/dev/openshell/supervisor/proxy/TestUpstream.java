package dev.openshell.supervisor.proxy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import javax.net.ssl.SSLContext;

/**
 * A real HTTP/1.1 origin on 127.0.0.1 for tests: records every request byte for byte and answers with a configurable
 * responder. Plain or TLS. WebSocket upgrades get a 101 and then an echo of every byte.
 */
final class TestUpstream implements AutoCloseable {
    /** One received request: the raw bytes (head and body as framed on the wire) and the decoded body. */
    record Received(byte[] raw, String head, byte[] body) {
        String rawText() {
            return new String(raw, StandardCharsets.ISO_8859_1);
        }

        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final ServerSocket server;
    private final BlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final AtomicInteger connections = new AtomicInteger();
    private final List<Socket> sockets = new ArrayList<>();
    private volatile Function<Received, byte[]> responder = r -> ok("ok");
    private volatile boolean closed;
    /** When set, the upstream closes each connection right after its response, without saying so. */
    volatile boolean closeSilentlyAfterResponse;
    /**
     * When set, the response is sent in two writes: up to and including its head's empty line, then (once the latch
     * opens, at most 5 s later: {@link #holdTimedOut}) the rest.
     */
    volatile java.util.concurrent.CountDownLatch holdBodyUntil;
    /** When set with {@link #holdBodyUntil}, the first write ends after the first occurrence of this text instead. */
    volatile String holdAfter;
    /** Whether a held body went out because the latch did not open within 5 s. */
    volatile boolean holdTimedOut;
    /**
     * When set, a WebSocket upgrade is answered with these bytes (a head and frames) instead of a 101 and an echo;
     * the connection then closes once the client sends a byte (its close frame) or ends.
     */
    volatile Function<Received, byte[]> upgrade;

    TestUpstream(SSLContext tls) throws IOException {
        server = tls == null ? new ServerSocket(0, 50, InetAddress.getLoopbackAddress())
                : tls.getServerSocketFactory().createServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(this::acceptLoop);
    }

    static TestUpstream plain() throws IOException {
        return new TestUpstream(null);
    }

    int port() {
        return server.getLocalPort();
    }

    int connections() {
        return connections.get();
    }

    void respond(Function<Received, byte[]> responder) {
        this.responder = responder;
    }

    /** {@return the next request received, waiting at most 10 s} */
    Received take() throws InterruptedException {
        Received r = received.poll(10, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("the upstream received no request within 10 s");
        }
        return r;
    }

    /** {@return a request already received, or null} */
    Received poll() {
        return received.poll();
    }

    /** Drops the requests already received. */
    void drain() {
        received.clear();
    }

    /** Answers every request {@code 200} with the body {@code ok} again and drops the requests already received. */
    void reset() {
        respond(r -> ok("ok"));
        drain();
    }

    int pending() {
        return received.size();
    }

    static byte[] ok(String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        return bytes("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + b.length + "\r\n\r\n" + body);
    }

    /** {@return the Sec-WebSocket-Accept answering the Sec-WebSocket-Key of {@code head} (RFC 6455 section 4.2.2)} */
    static String accept(String head) {
        java.util.regex.Matcher m = java.util.regex.Pattern
                .compile("(?im)^sec-websocket-key:[ \t]*([^\r\n]*?)[ \t]*\r?$").matcher(head);
        String key = m.find() ? m.group(1) : "";
        try {
            return java.util.Base64.getEncoder().encodeToString(java.security.MessageDigest.getInstance("SHA-1")
                    .digest((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").getBytes(StandardCharsets.ISO_8859_1)));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private void acceptLoop() {
        while (!closed) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                synchronized (sockets) {
                    sockets.add(s);
                }
                connections.incrementAndGet();
                Thread.ofVirtual().start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            while (true) {
                ByteArrayOutputStream raw = new ByteArrayOutputStream();
                String head = readHead(in, raw);
                if (head == null) {
                    return;
                }
                String lower = head.toLowerCase(Locale.ROOT);
                ByteArrayOutputStream body = new ByteArrayOutputStream();
                long cl = contentLength(lower);
                if (lower.contains("\r\ntransfer-encoding: chunked")) {
                    readChunked(in, raw, body);
                } else if (cl > 0) {
                    byte[] b = in.readNBytes((int) cl);
                    raw.write(b);
                    body.write(b);
                }
                Received r = new Received(raw.toByteArray(), head, body.toByteArray());
                received.add(r);
                Function<Received, byte[]> upgraded = upgrade;
                if (lower.contains("\r\nupgrade: websocket") && upgraded != null) {
                    out.write(upgraded.apply(r));
                    out.flush();
                    in.read();
                    return;
                }
                if (lower.contains("\r\nupgrade: websocket")) {
                    out.write(bytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Accept: " + accept(head) + "\r\n\r\n"));
                    out.flush();
                    in.transferTo(out);
                    return;
                }
                byte[] response = responder.apply(r);
                if (response == null) {
                    return; // close without answering
                }
                java.util.concurrent.CountDownLatch hold = holdBodyUntil;
                if (hold != null) {
                    String text = new String(response, StandardCharsets.ISO_8859_1);
                    String after = holdAfter;
                    int split = after == null ? text.indexOf("\r\n\r\n") + 4 : text.indexOf(after) + after.length();
                    out.write(response, 0, split);
                    out.flush();
                    try {
                        holdTimedOut = !hold.await(5, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                    out.write(response, split, response.length - split);
                } else {
                    out.write(response);
                }
                out.flush();
                if (closeSilentlyAfterResponse) {
                    return;
                }
                if (new String(response, StandardCharsets.ISO_8859_1).toLowerCase(Locale.ROOT)
                        .contains("\r\nconnection: close\r\n")) {
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            // connection ended, or the proxy cut a malformed message short: nothing complete to record
        }
    }

    private static String readHead(InputStream in, ByteArrayOutputStream raw) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            raw.write(c);
            sb.append((char) c);
            if (sb.length() >= 4 && sb.substring(sb.length() - 4).equals("\r\n\r\n")) {
                return sb.toString();
            }
        }
        return null;
    }

    private static long contentLength(String lowerHead) {
        int i = lowerHead.indexOf("\r\ncontent-length:");
        if (i < 0) {
            return 0;
        }
        int end = lowerHead.indexOf("\r\n", i + 2);
        return Long.parseLong(lowerHead.substring(i + 17, end).trim());
    }

    private static void readChunked(InputStream in, ByteArrayOutputStream raw, ByteArrayOutputStream body)
            throws IOException {
        while (true) {
            StringBuilder line = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                raw.write(c);
                if (c == '\n') {
                    break;
                }
                line.append((char) c);
            }
            int size = Integer.parseInt(line.toString().trim().split(";")[0], 16);
            if (size == 0) {
                // trailer lines up to the empty line
                StringBuilder t = new StringBuilder();
                while ((c = in.read()) >= 0) {
                    raw.write(c);
                    if (c == '\n') {
                        if (t.toString().equals("\r")) {
                            return;
                        }
                        t.setLength(0);
                    } else {
                        t.append((char) c);
                    }
                }
                return;
            }
            byte[] data = in.readNBytes(size);
            raw.write(data);
            body.write(data);
            raw.write(in.readNBytes(2));
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        synchronized (sockets) {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }
}
