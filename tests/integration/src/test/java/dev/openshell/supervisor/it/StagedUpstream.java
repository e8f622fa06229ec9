package dev.openshell.supervisor.it;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;
import javax.net.ssl.SSLContext;

/**
 * A loopback upstream (plain or TLS) for the response-middleware tests, answering by path; keep-alive, every read with
 * a 30 s timeout. Its event streams send the first event, then wait until the test releases them ({@link #armEvents})
 * before sending the last, so a test can show the first event reached the sandbox while the upstream still held the
 * rest. {@link #MARKER} stands for a prompt-injection marker, {@link #AWS_KEY} for a secret coming back.
 * <ul>
 *   <li>{@code /json}: {@code {"page":"hello MARKER world"}}; {@code /skip}: {@code {"page":"MARKER left alone"}};</li>
 *   <li>{@code /secret}: {@code {"key":"AWS_KEY","note":"MARKER"}};</li>
 *   <li>{@code /blocked}: {@code UPSTREAM-BLOCKED-PAGE} as {@code text/html};</li>
 *   <li>{@code /gzip}: {@code {"page":"zipped MARKER"}} gzip-compressed;</li>
 *   <li>{@code /events}: the event stream {@code data: one MARKER}, then {@code data: two};</li>
 *   <li>{@code /secret-events}: the event stream {@code data: key AWS_KEY}, then {@code data: two};</li>
 *   <li>{@code /split-events}: the event stream {@code data: one} and the first 8 characters of an event
 *       {@code data: key AWS_KEY tail}, then (released) the rest of that event and {@code data: two};</li>
 *   <li>{@code /header}: {@code clean page} as {@code text/plain} with {@code X-Leak: key AWS_KEY};</li>
 *   <li>{@code /br}: {@code k AWS_KEY} as {@code text/plain} labelled {@code Content-Encoding: br} (a coding the
 *       supervisor does not decode; the bytes are not really brotli).</li>
 * </ul>
 */
final class StagedUpstream implements AutoCloseable {
    static final String MARKER = "IGNORE-PREVIOUS-INSTRUCTIONS";
    /** AWS's documented example access key ID: {@code openshell/regex} finds it as {@code aws_access_key_id}. */
    static final String AWS_KEY = "AKIAIOSFODNN7EXAMPLE";

    private final ServerSocket server;
    private volatile CountDownLatch second = new CountDownLatch(0);
    volatile boolean releasedInTime;

    private StagedUpstream(ServerSocket server) {
        this.server = server;
        Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                try {
                    Socket s = server.accept();
                    Thread.ofVirtual().start(() -> serve(s));
                } catch (IOException e) {
                    return;
                }
            }
        });
    }

    static StagedUpstream plain() throws IOException {
        return new StagedUpstream(new ServerSocket(0, 64, InetAddress.getByName("127.0.0.1")));
    }

    static StagedUpstream tls(SSLContext context) throws IOException {
        return new StagedUpstream(context.getServerSocketFactory().createServerSocket(0, 64,
                InetAddress.getByName("127.0.0.1")));
    }

    int port() {
        return server.getLocalPort();
    }

    /** {@return the latch the next event stream waits on before its last event} */
    CountDownLatch armEvents() {
        second = new CountDownLatch(1);
        releasedInTime = false;
        return second;
    }

    private void serve(Socket s) {
        try (s) {
            s.setSoTimeout(30_000);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            while (true) {
                String head = readHead(in);
                if (head == null) {
                    return;
                }
                String target = head.split(" ")[1];
                String path = target.contains("?") ? target.substring(0, target.indexOf('?')) : target;
                switch (path) {
                    case "/json" -> out.write(ok("application/json", "{\"page\":\"hello " + MARKER + " world\"}"));
                    case "/skip" -> out.write(ok("application/json", "{\"page\":\"" + MARKER + " left alone\"}"));
                    case "/secret" -> out.write(ok("application/json",
                            "{\"key\":\"" + AWS_KEY + "\",\"note\":\"" + MARKER + "\"}"));
                    case "/blocked" -> out.write(ok("text/html", "UPSTREAM-BLOCKED-PAGE"));
                    case "/utf16le-form" -> out.write(ok("application/x-www-form-urlencoded; charset=UTF-16LE",
                            "&note=" + ResponseMiddlewareIT.OPENAI));
                    case "/utf16-text" -> out.write(ok("text/plain; charset=utf-16", "k " + ResponseMiddlewareIT.OPENAI));
                    case "/gzip" -> gzip(out);
                    case "/events" -> events(out, "data: one " + MARKER + "\n\n");
                    case "/secret-events" -> events(out, "data: key " + AWS_KEY + "\n\n");
                    case "/split-events" -> events(out, "data: one\n\ndata: key " + AWS_KEY.substring(0, 8),
                            AWS_KEY.substring(8) + " tail\n\ndata: two\n\n");
                    case "/header" -> out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Leak: key "
                            + AWS_KEY + "\r\nContent-Length: 10\r\n\r\nclean page").getBytes(StandardCharsets.UTF_8));
                    case "/early-hints" -> out.write(("HTTP/1.1 103 Early Hints\r\nLink: </k?key=" + AWS_KEY
                            + ">; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                            + "Content-Length: 10\r\n\r\nclean page").getBytes(StandardCharsets.UTF_8));
                    case "/br" -> out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: br"
                            + "\r\nContent-Length: " + (2 + AWS_KEY.length()) + "\r\n\r\nk " + AWS_KEY)
                            .getBytes(StandardCharsets.UTF_8));
                    default -> out.write(ok("text/plain", "unknown"));
                }
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // the peer went away
        }
    }

    private static void gzip(OutputStream out) throws IOException {
        ByteArrayOutputStream z = new ByteArrayOutputStream();
        try (GZIPOutputStream g = new GZIPOutputStream(z)) {
            g.write(("{\"page\":\"zipped " + MARKER + "\"}").getBytes(StandardCharsets.UTF_8));
        }
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip"
                + "\r\nContent-Length: " + z.size() + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        out.write(z.toByteArray());
    }

    private void events(OutputStream out, String first) throws IOException, InterruptedException {
        events(out, first, "data: two\n\n");
    }

    private void events(OutputStream out, String first, String last) throws IOException, InterruptedException {
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache"
                + "\r\nTransfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        chunk(out, first);
        out.flush();
        releasedInTime = second.await(20, TimeUnit.SECONDS);
        chunk(out, last);
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    private static void chunk(OutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        out.write((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(b);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] ok(String type, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        return ("HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\nContent-Length: " + b.length + "\r\n\r\n" + body)
                .getBytes(StandardCharsets.UTF_8);
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream h = new ByteArrayOutputStream();
        while (true) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            h.write(b);
            String s = h.toString(StandardCharsets.ISO_8859_1);
            if (s.endsWith("\r\n\r\n")) {
                return s;
            }
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
