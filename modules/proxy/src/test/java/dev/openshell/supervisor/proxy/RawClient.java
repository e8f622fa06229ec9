package dev.openshell.supervisor.proxy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A raw-bytes HTTP/1.1 client over a loopback socket, for framing tests. */
final class RawClient implements AutoCloseable {
    /** A response as read off the wire. */
    record Response(int status, String head, byte[] body) {
        String header(String name) {
            for (String line : head.split("\r\n")) {
                int c = line.indexOf(':');
                if (c > 0 && line.substring(0, c).equalsIgnoreCase(name)) {
                    return line.substring(c + 1).trim();
                }
            }
            return null;
        }

        List<String> headerNames() {
            List<String> names = new ArrayList<>();
            String[] lines = head.split("\r\n");
            for (int i = 1; i < lines.length; i++) {
                int c = lines[i].indexOf(':');
                if (c > 0) {
                    names.add(lines[i].substring(0, c).toLowerCase(Locale.ROOT));
                }
            }
            return names;
        }

        String bodyText() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawClient(int port) throws IOException {
        this(port, null);
    }

    /** @param from the local (client) address, another 127.x address to be a different client; null for any */
    RawClient(int port, InetAddress from) throws IOException {
        socket = from == null ? new Socket(InetAddress.getLoopbackAddress(), port)
                : new Socket(InetAddress.getLoopbackAddress(), port, from, 0);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(10_000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    /** @param connected a socket the caller bound and connected to the proxy */
    RawClient(Socket connected) throws IOException {
        socket = connected;
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(10_000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    Socket socket() {
        return socket;
    }

    InputStream in() {
        return in;
    }

    OutputStream out() {
        return out;
    }

    RawClient send(String text) throws IOException {
        return send(text.getBytes(StandardCharsets.ISO_8859_1));
    }

    RawClient send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
        return this;
    }

    /** Reads one response; bodies by Content-Length, chunked, or until close. */
    Response read() throws IOException {
        return read(false);
    }

    Response read(boolean headRequest) throws IOException {
        String head = readHead();
        if (head == null) {
            throw new IOException("connection closed before a response");
        }
        int status = Integer.parseInt(head.substring(9, 12));
        Response shell = new Response(status, head, new byte[0]);
        if (headRequest || status < 200 || status == 204 || status == 304) {
            return shell;
        }
        String te = shell.header("transfer-encoding");
        String cl = shell.header("content-length");
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if (te != null && te.toLowerCase(Locale.ROOT).endsWith("chunked")) {
            while (true) {
                String line = readLine();
                int size = Integer.parseInt(line.split(";")[0].trim(), 16);
                if (size == 0) {
                    while (!readLine().isEmpty()) {
                        // trailers
                    }
                    break;
                }
                body.write(in.readNBytes(size));
                readLine();
            }
        } else if (cl != null) {
            body.write(in.readNBytes(Integer.parseInt(cl)));
        } else {
            body.write(in.readAllBytes());
        }
        return new Response(status, head, body.toByteArray());
    }

    /** Reads a head (status line and fields, through the empty line), or null at end of stream. */
    String readHead() throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0) {
            sb.append((char) c);
            if (sb.length() >= 4 && sb.substring(sb.length() - 4).equals("\r\n\r\n")) {
                return sb.toString();
            }
        }
        return sb.isEmpty() ? null : sb.toString();
    }

    private String readLine() throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            sb.append((char) c);
        }
        return sb.toString().replace("\r", "");
    }

    /** {@return whether the peer closed the connection (end of stream) within 10 s} */
    boolean closedByPeer() throws IOException {
        try {
            return in.read() < 0;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
