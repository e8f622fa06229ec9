package dev.openshell.supervisor.runtime;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** A byte-level HTTP/1.1 client connection to the proxy, for tests that need to pause between head and body. */
final class RawHttp implements AutoCloseable {
    /** A response: status and body. */
    record Response(int status, String head, String body) {
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttp(int port) throws IOException {
        socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setSoTimeout(20_000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    void send(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** {@return the next response head and its Content-Length body} */
    Response read() throws IOException {
        String head = readHead();
        int status = Integer.parseInt(head.substring(9, 12));
        int length = 0;
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        return new Response(status, head, new String(in.readNBytes(length), StandardCharsets.UTF_8));
    }

    /** {@return the next response head, up to and without the empty line} */
    String readHead() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("connection closed after " + b.size() + " bytes: " + b);
            }
            b.write(c);
            matched = (c == '\r' && (matched == 0 || matched == 2)) || (c == '\n' && (matched == 1 || matched == 3))
                    ? matched + 1 : (c == '\r' ? 1 : 0);
        }
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return s.substring(0, s.length() - 4);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
