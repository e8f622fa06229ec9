package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8 end to end: {@code /metrics} of the admin listener after a known run, and {@code /health/live} and
 * {@code /health/ready} through start-up and a SIGTERM with a request in flight.
 */
class MetricsAndHealthIT {
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final HttpClient ADMIN = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @TempDir
    Path tmp;

    /** {@return the status of GET http://127.0.0.1:port/path, or -1 when nothing listens} */
    private static int status(int port, String path) throws InterruptedException {
        try {
            return ADMIN.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        }
    }

    private static boolean accepts(int port) {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    /** Polls with a bounded deadline: a short pause between attempts, never a wait for an event. */
    private static void pause() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }

    @Test
    void readyOnlyOnceTheProxyListens() throws Exception {
        try (ProxyWorld world = ProxyWorld.create(tmp.resolve("world"))) {
            int proxyPort = freePort();
            int adminPort = freePort();
            List<String> args = world.runArgs(true);
            args.set(args.indexOf("--listen") + 1, "127.0.0.1:" + proxyPort);
            args.set(args.indexOf("--admin-listen") + 1, "127.0.0.1:" + adminPort);
            // probe while the supervisor starts: every ready=200 must find the proxy accepting connections
            List<String> seen = new ArrayList<>();
            CompletableFuture<Void> prober = CompletableFuture.runAsync(() -> {
                long end = System.nanoTime() + DEADLINE.toNanos();
                try {
                    while (System.nanoTime() < end) {
                        int ready = status(adminPort, "/health/ready");
                        if (ready == 200) {
                            seen.add("ready, proxy " + (accepts(proxyPort) ? "accepting" : "NOT accepting"));
                            return;
                        }
                        if (seen.isEmpty() || !seen.get(seen.size() - 1).equals("ready " + ready)) {
                            seen.add("ready " + ready);
                        }
                        pause();
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try (SupervisorProcess supervisor = SupervisorProcess.start(args, Map.of())) {
                prober.get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                assertEquals(proxyPort, supervisor.port());
                assertEquals("ready, proxy accepting", seen.get(seen.size() - 1), seen.toString());
                assertTrue(seen.subList(0, seen.size() - 1).stream()
                        .allMatch(s -> s.equals("ready -1") || s.equals("ready 503")), seen.toString());
                assertEquals(200, status(adminPort, "/health/live"));
            }
        }
    }

    @Test
    void sigtermLetsTheInFlightRequestFinishThenClosesBothPorts() throws Exception {
        try (ProxyWorld world = ProxyWorld.create(tmp.resolve("world"));
             SupervisorProcess supervisor = world.start(true)) {
            int adminPort = supervisor.adminPort().orElseThrow();
            assertEquals(200, status(adminPort, "/health/ready"));
            assertEquals(200, status(adminPort, "/health/live"));

            RawUpstream.Hold hold = world.plain.holdNext();
            HttpClient client = ProxyWorld.client(supervisor, world.supervisorCa());
            CompletableFuture<HttpResponse<String>> inFlight = client.sendAsync(HttpRequest.newBuilder(
                    URI.create("http://" + ProxyWorld.REDACT + ":" + world.plain.port() + "/slow"))
                    .POST(HttpRequest.BodyPublishers.ofString(ProxyEndToEndIT.CHAT)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertTrue(hold.awaitArrival(), "the request reached the upstream");

            supervisor.signalTerm();
            // draining: no longer ready, still live
            long end = System.nanoTime() + DEADLINE.toNanos();
            int ready = 200;
            while (ready == 200 && System.nanoTime() < end) {
                ready = status(adminPort, "/health/ready");
                if (ready == 200) {
                    pause();
                }
            }
            assertEquals(503, ready, "not ready while in-flight requests finish");
            assertEquals(200, status(adminPort, "/health/live"));
            assertFalse(inFlight.isDone(), "the in-flight request waits for its upstream");
            assertTrue(supervisor.isAlive());

            hold.release();
            HttpResponse<String> r = inFlight.get(30, TimeUnit.SECONDS);
            assertEquals(200, r.statusCode());
            assertEquals("ok", r.body());
            assertEquals(ProxyEndToEndIT.CHAT_REDACTED, world.plain.take().bodyText(),
                    "the in-flight request went through the chain");

            assertEquals(143, supervisor.awaitExit(), "SIGTERM: the JVM's status for a signal-initiated stop");
            assertFalse(accepts(supervisor.port()), "the proxy port is closed");
            assertFalse(accepts(adminPort), "the admin port is closed");
        }
    }

    @Test
    void metricsAfterARunCountEveryStageInvocation() throws Exception {
        try (ProxyWorld world = ProxyWorld.create(tmp.resolve("world"));
             SupervisorProcess supervisor = world.start(true)) {
            String proxy = supervisor.proxyUrl();
            int up = world.plain.port();
            String chat = ProxyEndToEndIT.CHAT;
            String hello = "{\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
            Path big = Files.write(tmp.resolve("big.bin"), "b".repeat(ProxyWorld.TAGGER_LIMIT + 1)
                    .getBytes(StandardCharsets.US_ASCII));
            long buffered = 0;
            for (int i = 0; i < 3; i++) {
                assertEquals(200, post(proxy, ProxyWorld.REDACT, up, chat).status());
                buffered += chat.length();
            }
            for (int i = 0; i < 2; i++) {
                assertEquals(200, post(proxy, ProxyWorld.REDACT, up, hello).status());
                buffered += hello.length();
            }
            assertEquals(403, post(proxy, ProxyWorld.DENY, up, chat).status());
            assertEquals(200, post(proxy, ProxyWorld.DENY, up, hello).status());
            buffered += chat.length() + hello.length();
            for (int i = 0; i < 2; i++) {
                assertEquals(200, post(proxy, ProxyWorld.OPEN, up, "small").status());
                buffered += "small".length();
            }
            assertEquals(200, post(proxy, ProxyWorld.OPEN, up, "@" + big).status());
            assertEquals(413, post(proxy, ProxyWorld.CLOSED, up, "@" + big).status());
            assertEquals(200, post(proxy, ProxyWorld.PLAIN, up, chat).status());
            assertEquals(403, post(proxy, ProxyWorld.DENIED, up, chat).status());
            assertEquals(403, post(proxy, ProxyWorld.METADATA, 80, chat).status());
            // nothing to scan: openshell/regex declares skip_empty_body, so neither request invokes it
            Curl.Result get = Curl.run("-x", proxy, "http://" + ProxyWorld.REDACT + ":" + up + "/m");
            assertEquals(200, get.status(), get.toString());
            assertEquals(200, post(proxy, ProxyWorld.REDACT, up, "").status());

            Curl.Result scrape = Curl.run("http://127.0.0.1:" + supervisor.adminPort().orElseThrow() + "/metrics");
            assertEquals(200, scrape.status(), scrape.toString());
            Prometheus m = Prometheus.parse(scrape.body());

            String inv = "supervisor_stage_invocations_total";
            assertEquals(5, m.value(inv, stage("secrets", "openshell/regex", "allowed")), scrape.body());
            assertEquals(1, m.value(inv, stage("secrets-deny", "openshell/regex", "allowed")));
            assertEquals(1, m.value(inv, stage("secrets-deny", "openshell/regex", "denied")));
            assertEquals(2, m.value(inv, stage("tag-open", "examples/tagger", "allowed")));
            assertEquals(1, m.value(inv, stage("tag-open", "examples/tagger", "bypassed")));
            assertEquals(1, m.value(inv, stage("tag-closed", "examples/tagger", "failed_closed")));
            assertEquals(11, m.find(inv, Map.of()).stream().mapToDouble(Prometheus.Sample::value).sum(),
                    "no other stage invocation was counted");
            assertEquals(2, m.value("supervisor_stage_skipped_total",
                    Map.of("config_key", "secrets", "binding_id", "openshell/regex")), scrape.body());
            assertEquals(2, m.find("supervisor_stage_skipped_total", Map.of()).stream()
                    .mapToDouble(Prometheus.Sample::value).sum(), "no other stage was skipped");

            histogram(m, "secrets", "openshell/regex", 5);
            histogram(m, "secrets-deny", "openshell/regex", 2);
            histogram(m, "tag-open", "examples/tagger", 3);
            histogram(m, "tag-closed", "examples/tagger", 1);

            assertEquals(1, m.value("supervisor_bypasses_total",
                    Map.of("config_key", "tag-open", "binding_id", "examples/tagger")));
            assertEquals(buffered, (long) m.value("supervisor_body_bytes_buffered_total", Map.of()));
            // 14 admitted (every host but denied.test and metadata.test); one refused by L4, one by SSRF
            assertEquals(14, m.value("supervisor_requests_total", Map.of("outcome", "admitted")));
            assertEquals(1, m.value("supervisor_requests_total", Map.of("outcome", "denied_network")));
            assertEquals(1, m.value("supervisor_requests_total", Map.of("outcome", "denied_ssrf")));
            assertEquals(2, m.value("supervisor_failures_total", Map.of("code", "body_over_capacity")),
                    "the fail_open relay and the fail_closed refusal each count once: " + scrape.body());

            long secretsEvents = AuditLog.read(world.audit).stream()
                    .filter(e -> e.getInt("class_uid") == 4002
                            && "secrets".equals(AuditLog.openshell(e).getString("config_key", "")))
                    .count();
            assertEquals(5, secretsEvents, "one per-stage event per invocation; the skipped stage wrote none");
        }
    }

    private static Map<String, String> stage(String key, String binding, String decision) {
        return Map.of("config_key", key, "binding_id", binding, "decision", decision);
    }

    /** Checks one stage latency histogram: count, +Inf bucket, buckets never decreasing, a plausible sum. */
    private static void histogram(Prometheus m, String key, String binding, int count) {
        Map<String, String> labels = Map.of("config_key", key, "binding_id", binding);
        String name = "supervisor_stage_latency_seconds";
        assertEquals(count, m.value(name + "_count", labels), key);
        List<Prometheus.Sample> buckets = m.find(name + "_bucket", labels);
        assertFalse(buckets.isEmpty(), key);
        double previous = 0;
        for (Prometheus.Sample b : buckets) {
            assertTrue(b.value() >= previous, key + " buckets are cumulative");
            previous = b.value();
        }
        assertEquals("+Inf", buckets.get(buckets.size() - 1).labels().get("le"));
        assertEquals(count, previous, key + " +Inf bucket");
        double sum = m.value(name + "_sum", labels);
        assertTrue(sum >= 0 && sum < 30.0 * count, key + " sum " + sum);
    }

    private static Curl.Result post(String proxy, String host, int port, String data) throws Exception {
        return Curl.run("-x", proxy, "--data-binary", data, "http://" + host + ":" + port + "/m");
    }
}
