import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The SSE first-event delay through the supervisor (run by tests/load/response-load.sh; not a test): a loopback
 * upstream answering {@code text/event-stream} (chunked) and a client in the same JVM, so that one clock times the
 * upstream's send and the client's receipt. Prints {@code sse upstream listening on 127.0.0.1:PORT}, then reads the
 * proxy's port from one line of standard input.
 *
 * <p>Two shapes per host, one sample each a fresh client connection through the proxy:
 * <ul>
 *   <li>{@code after-head}: the upstream sends the response head, waits until the client has read it (a response
 *   stage's preflight is done by then) or {@value #HEAD_WAIT_MS} ms have passed (a proxy that delivers the head only
 *   with the first body bytes; counted as "head with event"), and then sends its first event; the delay is from that
 *   event's write on the upstream socket to the client having read the event's blank line;</li>
 *   <li>{@code with-head}: head and first event in one write; the delay runs from that write, so it includes the
 *   preflight of any response stage.</li>
 * </ul>
 * Then the upstream waits for the client to have read the first event (at most {@value #WAIT_SECONDS} s) before it
 * sends the last event and ends the stream, so a buffering proxy shows as a delay of {@value #WAIT_SECONDS} s or more
 * (counted as "held back"). Hosts alternate within each round (host A's after-head and with-head, host B's, ...).
 * Output: per host and shape, p50/p90/p99/max in ms over every round, and the 1-minute load average after each host's
 * samples in each round.
 *
 * <p>Usage: java SseFirstEvent.java SAMPLES ROUNDS WARMUP HOST... (each host resolved by the proxy to 127.0.0.1)
 */
public class SseFirstEvent {
    static final int WAIT_SECONDS = 5;
    static final int HEAD_WAIT_MS = 100;
    static final String FIRST = "data: {\"delta\":\"first event of the stream\"}\n\n";
    static final String LAST = "data: [DONE]\n\n";

    /** One sample's rendezvous between the client and the upstream connection. */
    static final class Sample {
        final boolean withHead;
        final CountDownLatch headRead = new CountDownLatch(1);
        final CountDownLatch firstRead = new CountDownLatch(1);
        volatile long sentNanos;
        volatile boolean headBeforeEvent;
        long delayNanos;

        Sample(boolean withHead) {
            this.withHead = withHead;
        }
    }

    static volatile Sample current;

    public static void main(String[] args) throws Exception {
        int samples = Integer.parseInt(args[0]);
        int rounds = Integer.parseInt(args[1]);
        int warmup = Integer.parseInt(args[2]);
        List<String> hosts = Arrays.asList(args).subList(3, args.length);
        ServerSocket server = new ServerSocket(0, 64, InetAddress.getByName("127.0.0.1"));
        Thread.ofVirtual().start(() -> accept(server));
        System.out.println("sse upstream listening on 127.0.0.1:" + server.getLocalPort());
        System.out.flush();
        String line = new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
        int proxy = Integer.parseInt(line.trim());
        int upstream = server.getLocalPort();
        Map<String, List<Double>> delays = new LinkedHashMap<>();
        Map<String, Integer> heldBack = new LinkedHashMap<>();
        Map<String, Integer> headWithEvent = new LinkedHashMap<>();
        for (String h : hosts) {
            for (boolean withHead : new boolean[] {false, true}) {
                for (int i = 0; i < warmup; i++) {
                    sample(proxy, h, upstream, withHead);
                }
            }
        }
        for (int r = 1; r <= rounds; r++) {
            for (String h : hosts) {
                for (boolean withHead : new boolean[] {false, true}) {
                    String key = h + " " + (withHead ? "with-head" : "after-head");
                    for (int i = 0; i < samples; i++) {
                        Sample s = sample(proxy, h, upstream, withHead);
                        double ms = s.delayNanos / 1e6;
                        delays.computeIfAbsent(key, k -> new ArrayList<>()).add(ms);
                        if (!withHead && !s.headBeforeEvent) {
                            headWithEvent.merge(key, 1, Integer::sum);
                        }
                        if (ms >= WAIT_SECONDS * 1000.0) {
                            heldBack.merge(key, 1, Integer::sum);
                        }
                    }
                }
                System.out.printf(Locale.ROOT, "round %d %s: load average %s%n", r, h, loadAverage());
            }
        }
        for (var e : delays.entrySet()) {
            List<Double> d = new ArrayList<>(e.getValue());
            d.sort(null);
            System.out.printf(Locale.ROOT, "SSE %-32s n=%d p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms  "
                    + "held back %d  head with event %d%n", e.getKey(), d.size(), pct(d, 50), pct(d, 90), pct(d, 99),
                    d.getLast(), heldBack.getOrDefault(e.getKey(), 0), headWithEvent.getOrDefault(e.getKey(), 0));
        }
        server.close();
    }

    static double pct(List<Double> sorted, int p) {
        return sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(p / 100.0 * sorted.size()) - 1));
    }

    static String loadAverage() throws IOException {
        return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ")[0];
    }

    /** {@return the sample, with the nanoseconds from the upstream's write of the first event to the client's read} */
    static Sample sample(int proxy, String host, int upstream, boolean withHead) throws Exception {
        Sample s = new Sample(withHead);
        current = s;
        try (Socket c = new Socket(InetAddress.getByName("127.0.0.1"), proxy)) {
            c.setTcpNoDelay(true);
            c.setSoTimeout(30_000);
            String authority = host + ":" + upstream;
            c.getOutputStream().write(("GET http://" + authority + "/events HTTP/1.1\r\nHost: " + authority
                    + "\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = new BufferedInputStream(c.getInputStream());
            String head = head(in);
            if (!head.startsWith("HTTP/1.1 200")) {
                throw new IllegalStateException("the proxy answered " + head.lines().findFirst().orElse(head));
            }
            s.headRead.countDown();
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            boolean chunked = head.toLowerCase(Locale.ROOT).contains("transfer-encoding: chunked");
            long read = 0;
            while (read == 0) {
                if (!next(in, body, chunked)) {
                    throw new IllegalStateException("the stream ended before its first event");
                }
                if (body.toString(StandardCharsets.UTF_8).contains("\n\n")) {
                    read = System.nanoTime();
                }
            }
            s.firstRead.countDown();
            while (next(in, body, chunked)) {
                // the last event and the end of the stream
            }
            if (!body.toString(StandardCharsets.UTF_8).endsWith(LAST)) {
                throw new IllegalStateException("the stream did not end with its last event");
            }
            s.delayNanos = read - s.sentNanos;
            return s;
        }
    }

    /** Reads one chunk (chunked) or what is available (until close); {@return false at the end of the body} */
    static boolean next(InputStream in, ByteArrayOutputStream body, boolean chunked) throws IOException {
        if (!chunked) {
            byte[] b = new byte[8192];
            int n = in.read(b);
            if (n < 0) {
                return false;
            }
            body.write(b, 0, n);
            return true;
        }
        String size = line(in);
        int n = Integer.parseInt(size.split(";")[0].trim(), 16);
        if (n == 0) {
            line(in);
            return false;
        }
        body.write(in.readNBytes(n));
        line(in);
        return true;
    }

    static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }

    static String head(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        for (String l = line(in); !l.isEmpty(); l = line(in)) {
            b.append(l).append('\n');
        }
        return b.toString();
    }

    static void accept(ServerSocket server) {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                Thread.ofVirtual().start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    /** Serves event streams on one (keep-alive) upstream connection, each for the sample current at its request. */
    static void serve(Socket socket) {
        try (socket) {
            InputStream in = new BufferedInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            while (!head(in).isEmpty()) {
                Sample s = current;
                byte[] head = ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                        + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
                if (s.withHead) {
                    byte[] both = concat(head, chunk(FIRST));
                    s.sentNanos = System.nanoTime();
                    out.write(both);
                } else {
                    out.write(head);
                    out.flush();
                    // a proxy that holds the head until body bytes arrive: the event goes after HEAD_WAIT_MS
                    s.headBeforeEvent = s.headRead.await(HEAD_WAIT_MS, TimeUnit.MILLISECONDS);
                    byte[] first = chunk(FIRST);
                    s.sentNanos = System.nanoTime();
                    out.write(first);
                }
                out.flush();
                s.firstRead.await(WAIT_SECONDS, TimeUnit.SECONDS);
                out.write(concat(chunk(LAST), "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII)));
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            // the proxy closed the connection
        }
    }

    static byte[] chunk(String s) {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        return concat((Integer.toHexString(b.length) + "\r\n").getBytes(StandardCharsets.US_ASCII), b,
                "\r\n".getBytes(StandardCharsets.US_ASCII));
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            b.write(p, 0, p.length);
        }
        return b.toByteArray();
    }
}
