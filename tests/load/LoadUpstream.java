import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The loopback upstream of tests/load/supervisor-load.sh (not a test): HTTP/1.1 keep-alive on 127.0.0.1, one virtual
 * thread per connection, reads each request (Content-Length bodies) and answers {@code 200 ok}. Prints
 * {@code upstream listening on 127.0.0.1:PORT} when ready; runs until killed. With a size argument the body is that
 * many bytes of JSON (an array of {@code {"id":"...","name":"...","tags":[...]}} records, the last one padded to the
 * size) instead of {@code ok}.
 * A request with the header {@code x-echo-authorization: 1} is answered instead with its own {@code Authorization}
 * value in the body ({@code auth=VALUE}), so that a proxy that injects a credential has it come back to scrub.
 * Usage: java LoadUpstream.java [body bytes]
 */
public class LoadUpstream {
    private static byte[] OK = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok"
            .getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] args) throws IOException {
        if (args.length > 0) {
            int size = Integer.parseInt(args[0]);
            String last = "{\"pad\":\"\"}]";
            if (size < last.length() + 1) {
                throw new IllegalArgumentException("the body size must be at least " + (last.length() + 1));
            }
            StringBuilder body = new StringBuilder(size + 80).append('[');
            for (int i = 0; body.length() + 160 < size; i++) {
                body.append("{\"id\":\"obj-").append(i).append("\",\"name\":\"report ").append(i)
                        .append(".pdf\",\"tags\":[\"q3\",\"finance\"],\"size\":").append(1000 + i).append("},\n");
            }
            // a last record padded so that the array ends at exactly size bytes: the body is valid JSON
            int pad = size - body.length() - last.length();
            body.append("{\"pad\":\"").append("x".repeat(pad)).append("\"}]");
            OK = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + size + "\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII);
        }
        try (ServerSocket server = new ServerSocket(0, 1024, InetAddress.getByName("127.0.0.1"))) {
            System.out.println("upstream listening on 127.0.0.1:" + server.getLocalPort());
            System.out.flush();
            while (true) {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                Thread.ofVirtual().start(() -> serve(s));
            }
        }
    }

    private static byte[] echoed(String authorization) {
        String body = "auth=" + authorization;
        return ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + body.length() + "\r\n\r\n" + body)
                .getBytes(StandardCharsets.ISO_8859_1);
    }

    private static void serve(Socket s) {
        try (s) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            while (true) {
                int length = 0;
                String authorization = null;
                boolean echo = false;
                StringBuilder line = new StringBuilder();
                boolean any = false;
                while (true) {
                    int c = in.read();
                    if (c < 0) {
                        return;
                    }
                    any = true;
                    if (c == '\n') {
                        String l = line.toString().trim();
                        if (l.isEmpty()) {
                            break;
                        }
                        if (l.regionMatches(true, 0, "content-length:", 0, 15)) {
                            length = Integer.parseInt(l.substring(15).trim());
                        } else if (l.regionMatches(true, 0, "authorization:", 0, 14)) {
                            authorization = l.substring(14).trim();
                        } else if (l.regionMatches(true, 0, "x-echo-authorization:", 0, 21)) {
                            echo = true;
                        }
                        line.setLength(0);
                    } else {
                        line.append((char) c);
                    }
                }
                if (!any) {
                    return;
                }
                in.readNBytes(length);
                out.write(echo ? echoed(authorization) : OK);
                out.flush();
            }
        } catch (IOException e) {
            // the client closed the connection
        }
    }
}
