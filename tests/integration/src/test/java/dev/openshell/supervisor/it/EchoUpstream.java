package dev.openshell.supervisor.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;
import javax.net.ssl.SSLContext;

/**
 * An upstream on 127.0.0.1 (plain or TLS) that hands back what it received, as httpbin, error pages and redirects do:
 * the attacker's tool against credential injection (issue 22). Keep-alive; every read has a 30 s timeout. What it
 * answers depends on the path:
 * <ul>
 *   <li>{@code /anything}: every request field as a response field {@code X-Echo-<name>}, {@code Set-Cookie} and
 *       {@code WWW-Authenticate} with the {@code X-Reflect} value, and a JSON body of the fields and the query
 *       (JSON-escaped, {@code /} as {@code \/}) with a Content-Length;</li>
 *   <li>{@code /redirect}: {@code 302} with {@code Location} set to the percent-decoded {@code to} query parameter;</li>
 *   <li>{@code /chunked}: the JSON body in 3-byte chunks (every value split across chunks);</li>
 *   <li>{@code /gzip}: the JSON body gzip-compressed, when the request accepts gzip;</li>
 *   <li>{@code /utf7}: the reflected value in UTF-7, declared {@code charset=utf-7};</li>
 *   <li>{@code /brotli}: a body labelled {@code Content-Encoding: br} holding the fields as they are;</li>
 *   <li>{@code /close}: the JSON body close-delimited ({@code Connection: close}, no length).</li>
 * </ul>
 */
final class EchoUpstream implements AutoCloseable {
    /** One request: its head as received (lines joined with CRLF) and its query. */
    record Received(String head, String query) {
        String header(String name) {
            for (String line : head.split("\r\n")) {
                int c = line.indexOf(':');
                if (c > 0 && line.substring(0, c).equalsIgnoreCase(name)) {
                    return line.substring(c + 1).strip();
                }
            }
            return null;
        }
    }

    private final ServerSocket server;
    private final LinkedBlockingQueue<Received> received = new LinkedBlockingQueue<>();
    private final List<Socket> open = new ArrayList<>();

    private EchoUpstream(ServerSocket server) {
        this.server = server;
        Thread.ofVirtual().name("echo-upstream-accept").start(this::acceptLoop);
    }

    static EchoUpstream plain() throws IOException {
        return new EchoUpstream(new ServerSocket(0, 64, InetAddress.getByName("127.0.0.1")));
    }

    static EchoUpstream tls(SSLContext context) throws IOException {
        return new EchoUpstream(context.getServerSocketFactory().createServerSocket(0, 64,
                InetAddress.getByName("127.0.0.1")));
    }

    int port() {
        return server.getLocalPort();
    }

    /** {@return the oldest request not yet taken; waits at most 30 s} */
    Received take() throws InterruptedException {
        Received r = received.poll(30, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("the echo upstream received no request within 30 s");
        }
        return r;
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                synchronized (open) {
                    open.add(s);
                }
                Thread.ofVirtual().name("echo-upstream-conn").start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            s.setSoTimeout(30_000);
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            while (true) {
                String head = readHead(in);
                if (head == null) {
                    return;
                }
                Received r = parse(head);
                String cl = r.header("content-length");
                if (cl != null) {
                    in.readNBytes(Integer.parseInt(cl)); // bodies are not echoed
                }
                received.add(r);
                boolean close = answer(r, out);
                out.flush();
                if (close) {
                    return;
                }
            }
        } catch (IOException e) {
            // the peer went away: the connection ends
        }
    }

    private static Received parse(String head) {
        String target = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
        int q = target.indexOf('?');
        return new Received(head, q < 0 ? "" : target.substring(q + 1));
    }

    private static String path(Received r) {
        String line = r.head().substring(0, r.head().indexOf("\r\n"));
        String target = line.split(" ")[1];
        int q = target.indexOf('?');
        return q < 0 ? target : target.substring(0, q);
    }

    private static String json(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("/", "\\/");
    }

    private static String jsonBody(Received r) {
        StringBuilder b = new StringBuilder("{\"headers\":{");
        String[] lines = r.head().split("\r\n");
        for (int i = 1; i < lines.length; i++) {
            int c = lines[i].indexOf(':');
            if (c > 0) {
                b.append(i > 1 ? "," : "").append('"').append(json(lines[i].substring(0, c))).append("\":\"")
                        .append(json(lines[i].substring(c + 1).strip())).append('"');
            }
        }
        return b.append("},\"query\":\"").append(json(r.query())).append("\"}").toString();
    }

    /** {@return whether to close after answering} */
    private static boolean answer(Received r, OutputStream out) throws IOException {
        String reflect = r.header("x-reflect") == null ? "none" : r.header("x-reflect");
        String body = jsonBody(r);
        switch (path(r)) {
            case "/anything" -> {
                StringBuilder h = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n");
                String[] lines = r.head().split("\r\n");
                for (int i = 1; i < lines.length; i++) {
                    int c = lines[i].indexOf(':');
                    if (c > 0) {
                        h.append("X-Echo-").append(lines[i], 0, c).append(": ")
                                .append(lines[i].substring(c + 1).strip()).append("\r\n");
                    }
                }
                h.append("Set-Cookie: echo=").append(reflect).append("; Path=/\r\n");
                h.append("WWW-Authenticate: Bearer error=\"").append(reflect).append("\"\r\n");
                write(out, h + "Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body);
            }
            case "/redirect" -> {
                String to = "";
                for (String p : r.query().split("&")) {
                    if (p.startsWith("to=")) {
                        to = URLDecoder.decode(p.substring(3), StandardCharsets.UTF_8);
                    }
                }
                write(out, "HTTP/1.1 302 Found\r\nLocation: " + to + "\r\nContent-Length: 0\r\n\r\n");
            }
            case "/chunked" -> {
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n");
                for (int i = 0; i < body.length(); i += 3) {
                    String part = body.substring(i, Math.min(body.length(), i + 3));
                    b.append(Integer.toHexString(part.length())).append("\r\n").append(part).append("\r\n");
                }
                write(out, b.append("0\r\n\r\n").toString());
            }
            case "/gzip" -> {
                String accept = r.header("accept-encoding") == null ? "" : r.header("accept-encoding");
                if (!accept.toLowerCase(Locale.ROOT).contains("gzip")) {
                    write(out, "HTTP/1.1 406 Not Acceptable\r\nContent-Length: 0\r\n\r\n");
                    return false;
                }
                ByteArrayOutputStream z = new ByteArrayOutputStream();
                try (GZIPOutputStream g = new GZIPOutputStream(z)) {
                    g.write(body.getBytes(StandardCharsets.UTF_8));
                }
                write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                        + "Content-Length: " + z.size() + "\r\n\r\n");
                out.write(z.toByteArray());
            }
            case "/sse-split" -> { // a token stream: the value's first 6 characters end one event, the rest starts the next
                StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n");
                for (String e : List.of("data: one\n\n", "data: key " + reflect.substring(0, 6) + "\n\n",
                        "data: " + reflect.substring(6) + " tail\n\n", "data: two\n\n")) {
                    int n = e.getBytes(StandardCharsets.UTF_8).length;
                    b.append(Integer.toHexString(n)).append("\r\n").append(e).append("\r\n");
                }
                write(out, b.append("0\r\n\r\n").toString());
            }
            case "/sse-forms" -> write(out, sseForm(r.query(), reflect));
            case "/early-hints" -> write(out, "HTTP/1.1 103 Early " + reflect + "\r\nLink: </s.css?k="
                    + CredentialInjectionIT.percent(reflect) + ">; rel=preload\r\nX-Hint: " + reflect
                    + "\r\nX-Hint-B64: " + Base64.getEncoder().encodeToString(("alice:" + reflect)
                    .getBytes(StandardCharsets.UTF_8)) + "\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
            case "/utf7" -> { // the value in UTF-7 (RFC 2152), one base64 run: Python's requests decodes it
                String u7 = "+" + Base64.getEncoder().withoutPadding().encodeToString(reflect
                        .getBytes(StandardCharsets.UTF_16BE)) + "-";
                write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-7\r\nContent-Length: "
                        + u7.length() + "\r\n\r\n" + u7);
            }
            case "/brotli" -> write(out, "HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: "
                    + body.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + body);
            case "/close" -> {
                write(out, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n" + body);
                return true;
            }
            case "/basic" -> {
                String auth = r.header("authorization") == null ? "" : r.header("authorization");
                String decoded = auth.startsWith("Basic ") ? new String(Base64.getDecoder().decode(
                        auth.substring(6)), StandardCharsets.UTF_8) : "";
                String text = "{\"authorization\":\"" + json(auth) + "\",\"decoded\":\"" + json(decoded) + "\"}";
                write(out, "HTTP/1.1 401 Unauthorized\r\nContent-Length: " + text.length() + "\r\n\r\n" + text);
            }
            default -> write(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        }
        return false;
    }

    /**
     * {@return a response whose events split the value as WHATWG clients read them} {@code form=bom}: after a byte
     * order mark; {@code json}: each event's JSON spans two {@code data} lines; {@code untyped}: no media type (whole
     * body); {@code untyped-chunked}: no media type, chunked; {@code lenient}: JSON that lenient readers accept (a
     * {@code NaN}, a second value after the first).
     */
    private static String sseForm(String query, String reflect) {
        String a = "key " + reflect.substring(0, 6);
        String b = reflect.substring(6) + " tail";
        String form = query.replace("form=", "");
        String events = switch (form) {
            case "bom" -> "\uFEFFdata: " + a + "\n\ndata: " + b + "\n\n";
            case "json" -> "data: {\"choices\":[{\"delta\":{\"content\":\ndata: \"" + a + "\"}}]}\n\n"
                    + "data: {\"choices\":[{\"delta\":\ndata: {\"content\":\"" + b + "\"}}]}\n\n";
            case "lenient" -> "data: {\"choices\":[{\"delta\":{\"content\":\"" + a + "\"}}],\"x\":NaN}\n\n"
                    + "data: {\"choices\":[{\"delta\":{\"content\":\"" + b + "\"}}]} {}\n\n";
            default -> "data: " + a + "\n\ndata: " + b + "\n\n";
        };
        String type = form.startsWith("untyped") ? "" : "Content-Type: text/event-stream\r\n";
        if (form.equals("untyped")) {
            return "HTTP/1.1 200 OK\r\nContent-Length: " + events.getBytes(StandardCharsets.UTF_8).length
                    + "\r\n\r\n" + events;
        }
        StringBuilder out = new StringBuilder("HTTP/1.1 200 OK\r\n" + type + "Transfer-Encoding: chunked\r\n\r\n");
        for (String e : events.split("(?<=\n\n)")) {
            out.append(Integer.toHexString(e.getBytes(StandardCharsets.UTF_8).length)).append("\r\n").append(e)
                    .append("\r\n");
        }
        return out.append("0\r\n\r\n").toString();
    }

    private static void write(OutputStream out, String s) throws IOException {
        out.write(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream raw = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                return null;
            }
            raw.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
            if (raw.size() > 1 << 20) {
                throw new IOException("head too large");
            }
        }
        String head = raw.toString(StandardCharsets.ISO_8859_1);
        return head.substring(0, head.length() - 4);
    }

    @Override
    public void close() throws IOException {
        server.close();
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
