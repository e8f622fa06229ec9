package dev.openshell.supervisor.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Raw bytes over a socket to the proxy: what curl and HttpClient would never send. */
final class RawClient {
    private RawClient() {
    }

    /**
     * One response.
     *
     * @param status the status code
     * @param head the status line and field lines
     * @param body the body (Content-Length framed)
     */
    record Response(int status, String head, String body) {
        boolean closes() {
            return head.toLowerCase(Locale.ROOT).contains("\r\nconnection: close");
        }
    }

    /** Sends {@code request} on a new connection and reads one response (30 s timeout). */
    static Response exchange(String host, int port, byte[] request) throws IOException {
        try (Socket s = new Socket(host, port)) {
            s.setSoTimeout(30_000);
            s.setTcpNoDelay(true);
            s.getOutputStream().write(request);
            s.getOutputStream().flush();
            return read(new BufferedInputStream(s.getInputStream()));
        }
    }

    static Response exchange(String host, int port, String request) throws IOException {
        return exchange(host, port, request.getBytes(StandardCharsets.ISO_8859_1));
    }

    static Response read(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("connection closed before a complete response head: " + head);
            }
            head.write(b);
            matched = (b == (matched % 2 == 0 ? '\r' : '\n')) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        String h = head.toString(StandardCharsets.ISO_8859_1);
        int status = Integer.parseInt(h.substring(9, 12));
        int length = 0;
        for (String line : h.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        byte[] body = in.readNBytes(length);
        return new Response(status, h, new String(body, StandardCharsets.UTF_8));
    }
}
