import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.ChainSelection;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.NetworkSettings;
import dev.openshell.supervisor.proxy.Planned;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.SupervisorProxy;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Load check (not a unit test): keep-alive clients on loopback send small POSTs (64-byte body) for a bounded time
 * and count, first straight to a local upstream, then through the proxy with no chain, then through the proxy with a
 * chain selected (identity chain: the body is buffered and the request rebuilt). Prints requests per second and
 * p50/p99 latency for each. Usage: java -cp <proxy jar and deps> ProxyLoad.java [seconds] [clients]
 */
public class ProxyLoad {
    static final byte[] BODY = "x".repeat(64).getBytes(StandardCharsets.US_ASCII);
    static final int MAX_REQUESTS = 2_000_000;

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int clients = args.length > 1 ? Integer.parseInt(args[1]) : 16;
        try (ServerSocket upstream = new ServerSocket(0, 512, InetAddress.getLoopbackAddress())) {
            Thread.ofVirtual().start(() -> serve(upstream));
            int up = upstream.getLocalPort();
            Path state = Files.createTempDirectory("proxy-load");
            boolean[] chain = {false};
            PolicySteps<Void> base = PolicySteps.passThrough((h, p, c) -> AdmissionDecision.allow(EndpointFacts.of(
                    "load")));
            // the identity chain: the body is buffered and the request rebuilt, when chain[0] is set
            PolicySteps<Void> steps = new PolicySteps<>(0, base.admit(), r -> new Planned<>(null, chain[0]
                    ? ChainSelection.selected(1024 * 1024, false) : ChainSelection.none()), base.l7(),
                    base.requestChain(), base.credentials(), base.audit());
            SupervisorProxy proxy = SupervisorProxy.builder()
                    .listen(new InetSocketAddress("127.0.0.1", 0))
                    .stateDirectory(state)
                    .network(new NetworkSettings(true, Map.of("load.example.test", InetAddress.getByName("127.0.0.1"))))
                    .policy(() -> steps)
                    .build();
            int proxyPort = proxy.start();
            try {
                String direct = "POST /load HTTP/1.1\r\nHost: load.example.test:" + up + "\r\nContent-Length: 64\r\n\r\n";
                String proxied = "POST http://load.example.test:" + up + "/load HTTP/1.1\r\nHost: load.example.test:" + up
                        + "\r\nContent-Length: 64\r\n\r\n";
                System.out.printf("load check: %d s per run, %d keep-alive clients, %d-byte POST bodies, %d CPUs%n",
                        seconds, clients, BODY.length, Runtime.getRuntime().availableProcessors());
                run("warm-up direct", up, direct, 3, clients, false);
                run("warm-up proxy", proxyPort, proxied, 3, clients, false);
                run("direct", up, direct, seconds, clients, true);
                run("proxy, no chain", proxyPort, proxied, seconds, clients, true);
                chain[0] = true;
                run("warm-up chain", proxyPort, proxied, 3, clients, false);
                run("proxy, chain selected", proxyPort, proxied, seconds, clients, true);
            } finally {
                proxy.stop();
            }
        }
    }

    static void run(String name, int port, String head, int seconds, int clients, boolean print) throws Exception {
        byte[] request = concat(head.getBytes(StandardCharsets.US_ASCII), BODY);
        AtomicBoolean stop = new AtomicBoolean();
        List<long[]> perClient = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        int[] counts = new int[clients];
        long start = System.nanoTime();
        long deadline = start + seconds * 1_000_000_000L;
        for (int i = 0; i < clients; i++) {
            long[] lat = new long[MAX_REQUESTS / clients];
            perClient.add(lat);
            int id = i;
            threads.add(Thread.ofVirtual().start(() -> {
                try (Socket s = new Socket("127.0.0.1", port)) {
                    s.setTcpNoDelay(true);
                    s.setSoTimeout(30_000);
                    InputStream in = new BufferedInputStream(s.getInputStream());
                    OutputStream out = s.getOutputStream();
                    int n = 0;
                    while (n < lat.length && System.nanoTime() < deadline) {
                        long t0 = System.nanoTime();
                        out.write(request);
                        out.flush();
                        readResponse(in);
                        lat[n++] = System.nanoTime() - t0;
                    }
                    counts[id] = n;
                } catch (IOException e) {
                    System.err.println(name + ": client failed: " + e);
                }
            }));
        }
        for (Thread t : threads) {
            t.join();
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        int total = Arrays.stream(counts).sum();
        long[] all = new long[total];
        int k = 0;
        for (int i = 0; i < clients; i++) {
            System.arraycopy(perClient.get(i), 0, all, k, counts[i]);
            k += counts[i];
        }
        Arrays.sort(all);
        if (print && total > 0) {
            System.out.printf("%-24s %9d requests %10.0f req/s   p50 %7.3f ms   p99 %7.3f ms%n", name, total,
                    total / elapsed, all[total / 2] / 1e6, all[(int) (total * 0.99)] / 1e6);
        }
    }

    static void readResponse(InputStream in) throws IOException {
        int len = -1;
        StringBuilder line = new StringBuilder();
        while (true) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("closed");
            }
            if (c == '\n') {
                String l = line.toString().trim();
                if (l.isEmpty()) {
                    break;
                }
                if (l.regionMatches(true, 0, "content-length:", 0, 15)) {
                    len = Integer.parseInt(l.substring(15).trim());
                }
                line.setLength(0);
            } else {
                line.append((char) c);
            }
        }
        in.readNBytes(len);
    }

    static void serve(ServerSocket server) {
        byte[] ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.US_ASCII);
        while (true) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                Thread.ofVirtual().start(() -> {
                    try (s) {
                        InputStream in = new BufferedInputStream(s.getInputStream());
                        OutputStream out = s.getOutputStream();
                        while (true) {
                            int len = 0;
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
                                        len = Integer.parseInt(l.substring(15).trim());
                                    }
                                    line.setLength(0);
                                } else {
                                    line.append((char) c);
                                }
                            }
                            if (!any) {
                                return;
                            }
                            in.readNBytes(len);
                            out.write(ok);
                            out.flush();
                        }
                    } catch (IOException e) {
                        // client closed
                    }
                });
            } catch (IOException e) {
                return;
            }
        }
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
