package dev.openshell.supervisor.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.zip.GZIPOutputStream;
import javax.net.ssl.SSLContext;

/**
 * A stateful upstream on 127.0.0.1 (plain or TLS), as object stores, profile services and chat histories are: a
 * request with {@code X-Store: V} stores V, and {@code /fetch/FORM} hands the stored value back in the form FORM,
 * whether or not that request carried anything (issue 39, items 3 and 4). Keep-alive; every read has a 30 s timeout.
 * <ul>
 *   <li>{@code /store}: 204;</li>
 *   <li>{@code /fetch/cl}: {@code X-Amz-Meta-Token: V}, body {@code {"token":"V"}} with a Content-Length;</li>
 *   <li>{@code /fetch/chunked}: that body in 3-byte chunks and a trailer field {@code X-Trailer-Token: V};</li>
 *   <li>{@code /fetch/json-u}: every character of V as a JSON {@code \\u00XX} escape (lowercase hex);
 *       {@code json-mixed}: every other character so, in uppercase hex, and {@code /} as {@code \/};</li>
 *   <li>{@code /fetch/utf16le[-bom]}, {@code /fetch/utf16be[-bom]}: the JSON body in UTF-16;</li>
 *   <li>{@code /fetch/gzip-identity}: the JSON body in gzip labelled {@code Content-Encoding: identity};
 *       {@code gzip-unlabelled}: with no label; {@code gzip-chunked}: no label, chunked; {@code gzip-twice}: gzip
 *       of gzip, no label; {@code gzip-clean}: {@link #CLEAN} in gzip, no label;</li>
 *   <li>{@code /fetch/gzip-tail}: {@link #CLEAN} in gzip, then V after the member, no label;
 *       {@code gzip-tail-identity}: the same labelled {@code identity}; {@code gzip-fname}: V in the member's
 *       FNAME header field;</li>
 *   <li>{@code /rawecho}: a benign echo: the request's body, then {@code x-store: } and the {@code X-Store} value
 *       this request carried;</li>
 *   <li>{@code /fetch/split}: {@code X-Part-A} holds the first half of V and {@code X-Part-B} the rest.</li>
 * </ul>
 */
final class StoringUpstream implements AutoCloseable {
    private final ServerSocket server;
    private final List<Socket> open = new ArrayList<>();
    private volatile String stored = "";
    /** The body and {@code X-Store} value of the request read last (requests are served one at a time). */
    private volatile byte[] lastBody = new byte[0];
    private volatile String lastStore = "";

    private StoringUpstream(ServerSocket server) {
        this.server = server;
        Thread.ofVirtual().name("storing-upstream-accept").start(this::acceptLoop);
    }

    static StoringUpstream plain() throws IOException {
        return new StoringUpstream(new ServerSocket(0, 64, InetAddress.getByName("127.0.0.1")));
    }

    static StoringUpstream tls(SSLContext context) throws IOException {
        return new StoringUpstream(context.getServerSocketFactory().createServerSocket(0, 64,
                InetAddress.getByName("127.0.0.1")));
    }

    int port() {
        return server.getLocalPort();
    }

    /** {@return the value stored last} */
    String stored() {
        return stored;
    }

    /** {@return {@code s} with JSON {@code \\uXXXX} and two-character escapes decoded (for the test's check)} */
    static String unescapeJson(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 5 < s.length() && s.charAt(i + 1) == 'u') {
                try {
                    b.append((char) Integer.parseInt(s.substring(i + 2, i + 6), 16));
                    i += 5;
                    continue;
                } catch (NumberFormatException e) {
                    // not an escape: kept as it is
                }
            }
            if (c == '\\' && i + 1 < s.length() && "\"\\/".indexOf(s.charAt(i + 1)) >= 0) {
                b.append(s.charAt(++i));
                continue;
            }
            b.append(c);
        }
        return b.toString();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                synchronized (open) {
                    open.add(s);
                }
                Thread.ofVirtual().name("storing-upstream-conn").start(() -> serve(s));
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
                String path = readRequest(in);
                if (path == null) {
                    return;
                }
                out.write(answer(path));
                out.flush();
            }
        } catch (IOException e) {
            // the client went away
        }
    }

    /** Reads one request head (and a Content-Length body); stores an {@code X-Store} value. {@return its path} */
    private String readRequest(InputStream in) throws IOException {
        String requestLine = line(in);
        if (requestLine == null || requestLine.isEmpty()) {
            return null;
        }
        long length = 0;
        lastStore = "";
        for (String l = line(in); l != null && !l.isEmpty(); l = line(in)) {
            int c = l.indexOf(':');
            String name = c > 0 ? l.substring(0, c).strip().toLowerCase(Locale.ROOT) : "";
            String value = c > 0 ? l.substring(c + 1).strip() : "";
            if (name.equals("x-store")) {
                stored = value;
                lastStore = value;
            } else if (name.equals("content-length")) {
                length = Long.parseLong(value);
            }
        }
        lastBody = in.readNBytes((int) length);
        String target = requestLine.split(" ")[1];
        int q = target.indexOf('?');
        String path = q < 0 ? target : target.substring(0, q);
        return path.startsWith("http") ? path.substring(path.indexOf('/', path.indexOf("//") + 2)) : path;
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                String s = b.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }

    private byte[] answer(String path) throws IOException {
        String v = stored;
        String json = "{\"token\":\"" + v + "\"}";
        return switch (path) {
            case "/store" -> "HTTP/1.1 204 No Content\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1);
            case "/fetch/cl" -> response("X-Amz-Meta-Token: " + v + "\r\n", json.getBytes(StandardCharsets.UTF_8));
            case "/fetch/chunked" -> chunked(json.getBytes(StandardCharsets.UTF_8), "X-Trailer-Token: " + v);
            case "/fetch/json-u" -> response("", ("{\"token\":\"" + escaped(v, false) + "\"}")
                    .getBytes(StandardCharsets.UTF_8));
            case "/fetch/json-mixed" -> response("", ("{\"token\":\"" + escaped(v, true) + "\"}")
                    .getBytes(StandardCharsets.UTF_8));
            case "/fetch/utf16le" -> utf16(json, StandardCharsets.UTF_16LE, false);
            case "/fetch/utf16le-bom" -> utf16(json, StandardCharsets.UTF_16LE, true);
            case "/fetch/utf16be" -> utf16(json, StandardCharsets.UTF_16BE, false);
            case "/fetch/utf16be-bom" -> utf16(json, StandardCharsets.UTF_16BE, true);
            case "/fetch/gzip-identity" -> response("Content-Encoding: identity\r\n", gzip(json.getBytes(
                    StandardCharsets.UTF_8)));
            case "/fetch/gzip-unlabelled" -> response("Content-Type: application/octet-stream\r\n",
                    gzip(json.getBytes(StandardCharsets.UTF_8)));
            case "/fetch/gzip-chunked" -> chunked(gzip(json.getBytes(StandardCharsets.UTF_8)), null);
            case "/fetch/gzip-twice" -> response("", gzip(gzip(json.getBytes(StandardCharsets.UTF_8))));
            case "/fetch/gzip-clean" -> response("", gzip(CLEAN.getBytes(StandardCharsets.UTF_8)));
            case "/fetch/gzip-tail" -> response("", concat(gzip(CLEAN.getBytes(StandardCharsets.UTF_8)),
                    ("\n" + v + "\n").getBytes(StandardCharsets.UTF_8)));
            case "/fetch/gzip-tail-identity" -> response("Content-Encoding: identity\r\n", concat(gzip(
                    CLEAN.getBytes(StandardCharsets.UTF_8)), ("\n" + v + "\n").getBytes(StandardCharsets.UTF_8)));
            case "/fetch/gzip-fname" -> response("", withName(gzip(CLEAN.getBytes(StandardCharsets.UTF_8)), v));
            case "/rawecho" -> response("", concat(lastBody, ("\nx-store: " + lastStore + "\n")
                    .getBytes(StandardCharsets.ISO_8859_1)));
            case "/fetch/split" -> response("X-Part-A: " + v.substring(0, v.length() / 2) + "\r\nX-Part-B: "
                    + v.substring(v.length() / 2) + "\r\n", "ok".getBytes(StandardCharsets.UTF_8));
            default -> response("", "no such form".getBytes(StandardCharsets.UTF_8));
        };
    }

    private static String escaped(String v, boolean mixed) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (!mixed) {
                b.append(String.format("\\u%04x", (int) c));
            } else if (c == '/') {
                b.append("\\/");
            } else if (i % 2 == 0) {
                b.append(String.format("\\u%04X", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    private static byte[] utf16(String text, Charset cs, boolean bom) {
        return response("Content-Type: application/json; charset=utf-16\r\n", ((bom ? "\ufeff" : "") + text)
                .getBytes(cs));
    }

    /** The text of {@code /fetch/gzip-clean}: gzip data without a label that holds no value. */
    static final String CLEAN = "{\"token\":\"none stored here\"}";

    static byte[] gzip(byte[] b) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream g = new GZIPOutputStream(out)) {
            g.write(b);
        }
        return out.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }

    /** {@return the member {@code gz} (as GZIPOutputStream writes it: no flags) with an FNAME header field} */
    private static byte[] withName(byte[] gz, String name) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(gz, 0, 3);
        out.write(8); // FLG.FNAME
        out.write(gz, 4, 6);
        out.writeBytes(name.getBytes(StandardCharsets.ISO_8859_1));
        out.write(0);
        out.write(gz, 10, gz.length - 10);
        return out.toByteArray();
    }

    private static byte[] response(String fields, byte[] body) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("HTTP/1.1 200 OK\r\n" + fields + "Content-Length: " + body.length + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(body);
        return out.toByteArray();
    }

    /** The body in 3-byte chunks (a value split across chunks), with a trailer field when one is given. */
    private static byte[] chunked(byte[] body, String trailer) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n" + (trailer == null ? ""
                : "Trailer: " + trailer.substring(0, trailer.indexOf(':')) + "\r\n") + "\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        for (int i = 0; i < body.length; i += 3) {
            int n = Math.min(3, body.length - i);
            out.writeBytes((Integer.toHexString(n) + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.write(body, i, n);
            out.writeBytes("\r\n".getBytes(StandardCharsets.ISO_8859_1));
        }
        out.writeBytes(("0\r\n" + (trailer == null ? "" : trailer + "\r\n") + "\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
        return out.toByteArray();
    }

    @Override
    public void close() throws IOException {
        server.close();
        synchronized (open) {
            for (Socket s : open) {
                s.close();
            }
        }
    }
}
