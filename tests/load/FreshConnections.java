/*
 * The first request of fresh connections through the proxy (not a test): what a client pays when it opens a burst of
 * new connections at once, as wrk does at the start of each window. Each round opens CONNECTIONS connections from
 * this JVM at once (one virtual thread each, released together), sends one POST on each and reads its whole answer;
 * the time of each is from the start of connect to the last byte. Prints p50, p90, p99 and max over every first
 * request, and the status of any answer that is not 200. Bounded: at most 200 rounds of at most 256 connections, 10 s
 * per request.
 *
 * Usage: java tests/load/FreshConnections.java PROXY_PORT ABSOLUTE_URL HOST BODY_FILE [CONNECTIONS [ROUNDS]]
 */

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

public class FreshConnections {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        String url = args[1];
        String host = args[2];
        byte[] body = Files.readAllBytes(Path.of(args[3]));
        int connections = args.length > 4 ? Integer.parseInt(args[4]) : 32;
        int rounds = args.length > 5 ? Integer.parseInt(args[5]) : 20;
        if (connections < 1 || connections > 256 || rounds < 1 || rounds > 200) {
            throw new IllegalArgumentException("CONNECTIONS 1..256, ROUNDS 1..200");
        }
        byte[] head = ("POST " + url + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        long[] all = new long[connections * rounds];
        int bad = 0;
        for (int r = 0; r < rounds; r++) {
            CountDownLatch go = new CountDownLatch(1);
            try (var pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<Long>> each = new ArrayList<>();
                for (int c = 0; c < connections; c++) {
                    each.add(pool.submit(() -> {
                        go.await();
                        return first(port, head, body);
                    }));
                }
                go.countDown();
                for (int c = 0; c < connections; c++) {
                    long t = each.get(c).get();
                    if (t < 0) {
                        bad++;
                    }
                    all[r * connections + c] = Math.abs(t);
                }
            }
        }
        Arrays.sort(all);
        int n = all.length;
        System.out.printf("RESULT %d %.3f %.3f %.3f %.3f %d%n", n, all[n / 2] / 1e6, all[(int) (n * 0.9)] / 1e6,
                all[(int) (n * 0.99)] / 1e6, all[n - 1] / 1e6, bad);
    }

    /** {@return the nanoseconds from connect to the answer's last byte; negative when the status was not 200} */
    private static long first(int port, byte[] head, byte[] body) throws IOException {
        long s = System.nanoTime();
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            socket.setSoTimeout(10_000);
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            byte[] request = new byte[head.length + body.length];
            System.arraycopy(head, 0, request, 0, head.length);
            System.arraycopy(body, 0, request, head.length, body.length);
            out.write(request);
            out.flush();
            InputStream in = new BufferedInputStream(socket.getInputStream());
            String status = line(in);
            long length = 0;
            for (String l = line(in); !l.isEmpty(); l = line(in)) {
                if (l.regionMatches(true, 0, "content-length:", 0, 15)) {
                    length = Long.parseLong(l.substring(15).trim());
                }
            }
            if (in.readNBytes((int) length).length != length) {
                throw new IOException("the connection closed in the answer's body");
            }
            long t = System.nanoTime() - s;
            return status.startsWith("HTTP/1.1 200 ") ? t : -t;
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the connection closed in the answer's head");
            }
            if (b != '\r') {
                sb.append((char) b);
            }
        }
        return sb.toString();
    }
}
