package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.CredentialVerdict;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.NetworkSettings;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.SupervisorProxy;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPOutputStream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The cost of response scrubbing (issue 22, item 2) on a 1 MiB response: one keep-alive client sends {@code GET}
 * through a real {@link SupervisorProxy} on 127.0.0.1 to a loopback upstream that answers 1 MiB of base64-like text
 * (letters, digits, {@code +/=}: the alphabet secrets are made of, so the byte filter is hit as often as it can be)
 * with the secret echoed 16 times, and the client reads the whole response. Average time per request, in
 * milliseconds.
 *
 * <ul>
 *   <li>{@code scrub=off}: no credential was injected, the response is relayed as it is (the baseline);
 *       {@code 1} and {@code 3}: one or three credentials injected, the response scrubbed of all of them (each in
 *       its 20-odd forms);</li>
 *   <li>{@code coding=identity}: Content-Length body (re-chunked when scrubbed); {@code gzip}: the same body
 *       gzip-compressed, decoded by the proxy when scrubbed, relayed compressed when not.</li>
 * </ul>
 * The set-up checks that a scrubbed response holds the placeholder 16 times and the secret never.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class ResponseScrubBenchmark {
    static final String HOST = "bench.test";
    static final int SIZE = 1 << 20;
    static final String[] SECRETS = {"sk-bench+Secret/Value0123456789abcdefXYZ", "ghp_benchTokenABCDEFGHIJKLMNOPQRSTUV012345",
        "AKIABENCHEXAMPLE7Q3Z"};

    @Param({"off", "1", "3"})
    public String scrub;

    @Param({"identity", "gzip"})
    public String coding;

    private ServerSocket upstream;
    private SupervisorProxy proxy;
    private Socket client;
    private InputStream in;
    private OutputStream out;
    private byte[] request;
    private Path state;

    static byte[] body() {
        Random r = new Random(42);
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=";
        StringBuilder b = new StringBuilder(SIZE);
        int segment = SIZE / 16 - SECRETS[0].length();
        for (int k = 0; k < 16; k++) {
            for (int i = 0; i < segment; i++) {
                b.append(alphabet.charAt(r.nextInt(alphabet.length())));
            }
            b.append(SECRETS[0]);
        }
        return b.toString().getBytes(StandardCharsets.US_ASCII);
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        byte[] plain = body();
        byte[] payload = plain;
        String encoding = "";
        if (coding.equals("gzip")) {
            ByteArrayOutputStream z = new ByteArrayOutputStream();
            try (GZIPOutputStream g = new GZIPOutputStream(z)) {
                g.write(plain);
            }
            payload = z.toByteArray();
            encoding = "Content-Encoding: gzip\r\n";
        }
        byte[] head = ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n" + encoding + "Content-Length: "
                + payload.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] response = new byte[head.length + payload.length];
        System.arraycopy(head, 0, response, 0, head.length);
        System.arraycopy(payload, 0, response, head.length, payload.length);
        upstream = new ServerSocket(0, 16, InetAddress.getByName("127.0.0.1"));
        Thread.ofVirtual().start(() -> serve(response));
        int n = scrub.equals("off") ? 0 : Integer.parseInt(scrub);
        List<InjectedCredentials.Entry> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            entries.add(new InjectedCredentials.Entry("SECRET" + i, SECRETS[i], "openshell:resolve:env:SECRET" + i,
                    false));
        }
        InjectedCredentials injected = InjectedCredentials.of(entries);
        PolicySteps<Void> base = PolicySteps.passThrough((h, p, c) -> AdmissionDecision.allow(EndpointFacts.of(
                "bench")));
        PolicySteps<Void> steps = new PolicySteps<>(0, base.admit(), base.plan(), base.l7(), base.requestChain(),
                (plan, req, sent) -> new CredentialVerdict.Forward(sent.headers(), sent.rawQuery(), injected),
                base.audit());
        state = Files.createTempDirectory("scrub-bench");
        proxy = SupervisorProxy.builder()
                .listen(new InetSocketAddress("127.0.0.1", 0))
                .stateDirectory(state)
                .network(new NetworkSettings(true, Map.of(HOST, InetAddress.getByName("127.0.0.1"))))
                .policy(() -> steps)
                .build();
        int port = proxy.start();
        client = new Socket("127.0.0.1", port);
        client.setTcpNoDelay(true);
        client.setSoTimeout(30_000);
        in = new BufferedInputStream(client.getInputStream(), 64 * 1024);
        out = client.getOutputStream();
        request = ("GET http://" + HOST + ":" + upstream.getLocalPort() + "/ HTTP/1.1\r\nHost: " + HOST + ":"
                + upstream.getLocalPort() + "\r\nAccept-Encoding: gzip\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] got = exchange();
        String text = new String(got, StandardCharsets.ISO_8859_1);
        if (n > 0) {
            int count = text.split("openshell:resolve:env:SECRET0", -1).length - 1;
            if (count != 16 || text.contains(SECRETS[0]) || got.length < SIZE - 1024) {
                throw new IllegalStateException("scrubbed response: " + count + " placeholders, " + got.length
                        + " bytes, secret present " + text.contains(SECRETS[0]));
            }
        } else if (got.length != payload.length) {
            throw new IllegalStateException("relayed " + got.length + " bytes of " + payload.length);
        }
    }

    private void serve(byte[] response) {
        while (!upstream.isClosed()) {
            try {
                Socket s = upstream.accept();
                Thread.ofVirtual().start(() -> {
                    try (s) {
                        InputStream i = new BufferedInputStream(s.getInputStream());
                        OutputStream o = s.getOutputStream();
                        while (readHead(i) != null) {
                            o.write(response);
                            o.flush();
                        }
                    } catch (IOException e) {
                        // closed
                    }
                });
            } catch (IOException e) {
                return;
            }
        }
    }

    /** {@return the response body as received (chunks joined)} */
    byte[] exchange() throws IOException {
        out.write(request);
        out.flush();
        String head = readHead(in);
        if (head == null || !head.startsWith("HTTP/1.1 200")) {
            throw new IOException("unexpected response: " + head);
        }
        String lower = head.toLowerCase(java.util.Locale.ROOT);
        ByteArrayOutputStream body = new ByteArrayOutputStream(SIZE + 4096);
        if (lower.contains("transfer-encoding: chunked")) {
            while (true) {
                String line = readLine(in);
                int size = Integer.parseInt(line.split(";")[0].trim(), 16);
                if (size == 0) {
                    readLine(in);
                    break;
                }
                body.write(in.readNBytes(size));
                readLine(in);
            }
        } else {
            int at = lower.indexOf("content-length: ") + 16;
            int len = Integer.parseInt(lower.substring(at, lower.indexOf("\r\n", at)).trim());
            body.write(in.readNBytes(len));
        }
        return body.toByteArray();
    }

    @Benchmark
    public int response() throws IOException {
        return exchange().length;
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException {
        client.close();
        proxy.stop();
        upstream.close();
    }

    private static String readHead(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder(256);
        while (true) {
            int c = in.read();
            if (c < 0) {
                return null;
            }
            b.append((char) c);
            int n = b.length();
            if (n >= 4 && b.charAt(n - 1) == '\n' && b.charAt(n - 2) == '\r' && b.charAt(n - 3) == '\n'
                    && b.charAt(n - 4) == '\r') {
                return b.toString();
            }
        }
    }

    private static String readLine(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder(16);
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }
}
