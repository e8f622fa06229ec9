package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Live reload against a real supervisor on loopback: the example tagger plugin (a third-party JAR in a plugins
 * directory) runs as two stages whose tags name the generation, so the upstream sees which generation served each
 * request, stage by stage.
 */
class SupervisorReloadTest {
    private static final String HOST = "api.test";

    @TempDir
    Path dir;

    private RecordingUpstream upstream;
    private Supervisor supervisor;
    private Path policy;
    private Path audit;
    private HttpClient client;

    @BeforeEach
    void setUp() throws IOException {
        upstream = new RecordingUpstream();
        Path plugins = Files.createDirectories(dir.resolve("plugins"));
        Path tagger = Path.of(System.getProperty("test.plugins", "target/test-plugins"), "example-tagger.jar");
        assertTrue(Files.isRegularFile(tagger), "missing " + tagger.toAbsolutePath());
        Files.copy(tagger, plugins.resolve("example-tagger.jar"));
        LoopbackSupervisor.writeGateway(dir, TestPins.toml(plugins.resolve("example-tagger.jar")), "api.test");
        policy = dir.resolve("config").resolve("policy.yaml");
        Files.createDirectories(policy.getParent());
        Files.writeString(policy, tagged("a1", "a2"));
        audit = LoopbackSupervisor.audit(dir);
    }

    @AfterEach
    void tearDown() {
        if (supervisor != null) {
            supervisor.close();
        }
        upstream.close();
    }

    private void start(Optional<Duration> watch) {
        supervisor = LoopbackSupervisor.start(dir, policy, Optional.of(dir.resolve("plugins")), watch);
        client = LoopbackSupervisor.builder(supervisor).build();
    }

    /** A policy admitting api.test on the upstream's port, with two tagger stages. */
    private String tagged(String first, String second) {
        return """
                version: 1
                network_policies:
                  api:
                    name: test API
                    endpoints:
                      - host: api.test
                        port: %d
                network_middlewares:
                  first:
                    middleware: examples/tagger
                    order: 10
                    config: { tag: %s }
                    endpoints:
                      include: ["api.test"]
                  second:
                    middleware: examples/tagger
                    order: 20
                    config: { tag: %s }
                    endpoints:
                      include: ["api.test"]
                """.formatted(upstream.port(), first, second);
    }

    /** Replaces the policy file in one step, as editors and config managers do. */
    private void writePolicy(String text) throws IOException {
        Path tmp = policy.resolveSibling(".policy.yaml.tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, policy, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return client.send(HttpRequest.newBuilder(URI.create("http://" + HOST + ":" + upstream.port() + path))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private List<String> tagsOfLast(String path) {
        List<RecordingUpstream.Hit> hits = upstream.hits(path);
        assertFalse(hits.isEmpty(), "the upstream never saw " + path);
        return hits.get(hits.size() - 1).tags();
    }

    @Test
    void reloadSwapsInTheNewPolicyAsANewGeneration() throws Exception {
        start(Optional.empty());
        assertEquals(200, get("/before").statusCode());
        assertEquals(List.of("a1", "a2"), tagsOfLast("/before"));
        long first = supervisor.generation().number();

        writePolicy(tagged("b1", "b2"));
        ReloadOutcome.Installed installed = assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
        assertEquals(first, installed.replaced());
        assertTrue(installed.serving() > first);
        assertEquals(installed.serving(), supervisor.generation().number());
        assertEquals(200, get("/after").statusCode());
        assertEquals(List.of("b1", "b2"), tagsOfLast("/after"));

        List<String> events = Files.readAllLines(audit);
        assertEquals(1, events.stream().filter(e -> e.contains("\"change\":\"supervisor_start\"")
                && e.contains("\"status\":\"Success\"")).count(), "start-up is audited as a start");
        assertTrue(events.stream().anyMatch(e -> e.contains("\"change\":\"registry_reload\"")
                && e.contains("\"status\":\"Success\"")), "and the reload as a reload");
        assertTrue(events.stream().filter(e -> e.contains("\"change\":\"supervisor_start\"")).allMatch(e ->
                e.contains("network polic") && !e.contains("policies_") && !e.contains("__")),
                "the detail reads as written: " + events);
    }

    @Test
    void aBrokenPolicyKeepsTheLastKnownGoodGenerationServing() throws Exception {
        start(Optional.empty());
        long serving = supervisor.generation().number();
        writePolicy(tagged("b1", "b2").replace("order: 20", "order: 10") + "  bogus: [\n");
        ReloadOutcome.Failed failed = assertInstanceOf(ReloadOutcome.Failed.class, supervisor.reload());
        assertEquals(serving, failed.serving());
        assertEquals(serving, supervisor.generation().number());
        assertFalse(failed.problems().isEmpty());
        assertTrue(failed.problems().get(0).describe().startsWith(policy + ":"), failed.problems().get(0).describe());
        assertTrue(failed.reason().contains(policy.toString()), failed.reason());

        assertEquals(200, get("/still").statusCode());
        assertEquals(List.of("a1", "a2"), tagsOfLast("/still"), "the old generation keeps serving");
        String failure = Files.readAllLines(audit).stream()
                .filter(e -> e.contains("\"change\":\"registry_reload\"") && e.contains("\"status\":\"Failure\""))
                .findFirst().orElseThrow(() -> new AssertionError("no registry_reload failure event"));
        assertTrue(failure.contains("keeps serving"), failure);
        assertFalse(failure.contains("bogus"), "no policy content in the event: " + failure);
    }

    @Test
    void restoringTheGoodFileAfterAFailedReloadIsReportedOnce() throws Exception {
        start(Optional.empty());
        String good = Files.readString(policy);
        writePolicy(good + "  bogus: [\n");
        assertInstanceOf(ReloadOutcome.Failed.class, supervisor.reload());
        writePolicy(good);
        assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
        List<String> restored = Files.readAllLines(audit).stream().filter(e -> e.contains("valid again")).toList();
        assertEquals(1, restored.size(), "the recovery is audited: " + restored);
        assertTrue(restored.getFirst().contains("\"status\":\"Success\""), restored.getFirst());
        supervisor.reload();
        assertEquals(1, Files.readAllLines(audit).stream().filter(e -> e.contains("valid again")).count(),
                "once, not on every later reload");
    }

    @Test
    void aConfigTheBindingRefusesIsAReloadFailure() throws Exception {
        start(Optional.empty());
        writePolicy(tagged("b1", "not a valid tag!"));
        ReloadOutcome.Failed failed = assertInstanceOf(ReloadOutcome.Failed.class, supervisor.reload());
        assertTrue(failed.problems().stream().anyMatch(p -> p.keyPath().startsWith("network_middlewares.second")),
                failed.problems().toString());
        assertEquals(200, get("/still").statusCode());
        assertEquals(List.of("a1", "a2"), tagsOfLast("/still"));
    }

    @Test
    void aChangedPolicyFileIsReloadedAndAnIdenticalRewriteIsNot() throws Exception {
        start(Optional.of(Duration.ofMillis(50)));
        BlockingQueue<ReloadOutcome> outcomes = new LinkedBlockingQueue<>();
        supervisor.onReload(outcomes::add);

        writePolicy(tagged("b1", "b2"));
        ReloadOutcome o = outcomes.poll(20, TimeUnit.SECONDS);
        assertInstanceOf(ReloadOutcome.Installed.class, o, "the watcher reloads a changed file");
        assertEquals(200, get("/watched").statusCode());
        assertEquals(List.of("b1", "b2"), tagsOfLast("/watched"));

        long serving = supervisor.generation().number();
        writePolicy(tagged("b1", "b2"));
        ReloadOutcome same = outcomes.poll(20, TimeUnit.SECONDS);
        assertInstanceOf(ReloadOutcome.Unchanged.class, same, "identical content is not swapped");
        assertEquals(serving, supervisor.generation().number());

        writePolicy("version: 1\nnetwork_policies: [\n");
        ReloadOutcome broken = outcomes.poll(20, TimeUnit.SECONDS);
        assertInstanceOf(ReloadOutcome.Failed.class, broken, "a broken file is reported");
        assertEquals(serving, supervisor.generation().number());
        assertEquals(200, get("/after-broken").statusCode());
        assertEquals(List.of("b1", "b2"), tagsOfLast("/after-broken"));
    }

    /**
     * A Kubernetes ConfigMap volume: {@code policy.yaml -> ..data/policy.yaml}, {@code ..data -> ..v1}; an update
     * writes {@code ..v2} and swaps the {@code ..data} link in one rename, never touching {@code policy.yaml}.
     */
    @Test
    void aConfigMapStyleLinkSwapIsPickedUp() throws Exception {
        Path volume = Files.createDirectories(dir.resolve("volume"));
        Files.createDirectories(volume.resolve("..v1"));
        Files.writeString(volume.resolve("..v1/policy.yaml"), tagged("a1", "a2"));
        Files.createSymbolicLink(volume.resolve("..data"), Path.of("..v1"));
        Files.createSymbolicLink(volume.resolve("policy.yaml"), Path.of("..data/policy.yaml"));
        policy = volume.resolve("policy.yaml");
        start(Optional.of(Duration.ofMillis(50)));
        BlockingQueue<ReloadOutcome> outcomes = new LinkedBlockingQueue<>();
        supervisor.onReload(outcomes::add);
        assertEquals(200, get("/v1").statusCode());
        assertEquals(List.of("a1", "a2"), tagsOfLast("/v1"));

        Files.createDirectories(volume.resolve("..v2"));
        Files.writeString(volume.resolve("..v2/policy.yaml"), tagged("b1", "b2"));
        Files.createSymbolicLink(volume.resolve("..data_tmp"), Path.of("..v2"));
        Files.move(volume.resolve("..data_tmp"), volume.resolve("..data"), StandardCopyOption.ATOMIC_MOVE);
        ReloadOutcome o = outcomes.poll(20, TimeUnit.SECONDS);
        while (o instanceof ReloadOutcome.Unchanged) {
            o = outcomes.poll(20, TimeUnit.SECONDS);
        }
        assertInstanceOf(ReloadOutcome.Installed.class, o);
        assertEquals(200, get("/v2").statusCode());
        assertEquals(List.of("b1", "b2"), tagsOfLast("/v2"));
    }

    @Test
    void anInFlightRequestFinishesOnTheGenerationItStartedWith() throws Exception {
        start(Optional.empty());
        int port = upstream.port();
        try (RawHttp c = new RawHttp(supervisor.port())) {
            c.send("POST http://api.test:" + port + "/inflight HTTP/1.1\r\nHost: api.test:" + port
                    + "\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n");
            // 100 Continue comes only after the chain is selected: the request is now fixed to generation A
            assertTrue(c.readHead().startsWith("HTTP/1.1 100"));
            writePolicy(tagged("b1", "b2"));
            assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
            c.send("hello");
            RawHttp.Response r = c.read();
            assertEquals(200, r.status(), r.head());
        }
        assertEquals(List.of("a1", "a2"), tagsOfLast("/inflight"));
        assertEquals("hello", upstream.hits("/inflight").get(0).body());
        assertEquals(200, get("/next").statusCode());
        assertEquals(List.of("b1", "b2"), tagsOfLast("/next"));
    }

    @Test
    void admissionFollowsTheCurrentGeneration() throws Exception {
        start(Optional.empty());
        assertEquals(200, get("/admitted").statusCode());
        writePolicy(tagged("b1", "b2").replace("host: api.test", "host: other.test"));
        assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
        HttpResponse<String> denied = get("/denied");
        assertEquals(403, denied.statusCode());
        assertTrue(denied.body().contains("policy_denied"), denied.body());
        assertTrue(upstream.hits("/denied").isEmpty(), "a request the new policy denies never reaches the upstream");
    }

    @Test
    void aRequestInsideATunnelIsAdmittedAgainByTheGenerationServingIt() throws Exception {
        start(Optional.empty());
        int port = upstream.port();
        try (RawHttp c = new RawHttp(supervisor.port())) {
            c.send("CONNECT api.test:" + port + " HTTP/1.1\r\nHost: api.test:" + port + "\r\n\r\n");
            assertTrue(c.readHead().startsWith("HTTP/1.1 200"));
            c.send("GET /in-tunnel-1 HTTP/1.1\r\nHost: api.test:" + port + "\r\n\r\n");
            assertEquals(200, c.read().status());

            writePolicy(tagged("b1", "b2"));
            assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
            c.send("GET /in-tunnel-2 HTTP/1.1\r\nHost: api.test:" + port + "\r\n\r\n");
            assertEquals(200, c.read().status());

            writePolicy(tagged("c1", "c2").replace("host: api.test", "host: other.test"));
            assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
            c.send("GET /in-tunnel-3 HTTP/1.1\r\nHost: api.test:" + port + "\r\n\r\n");
            RawHttp.Response denied = c.read();
            assertEquals(403, denied.status(), denied.head());
            assertTrue(denied.body().contains("policy_denied"), denied.body());
        }
        assertEquals(List.of("a1", "a2"), tagsOfLast("/in-tunnel-1"));
        assertEquals(List.of("b1", "b2"), tagsOfLast("/in-tunnel-2"), "the tunnel's next request uses the new chain");
        assertTrue(upstream.hits("/in-tunnel-3").isEmpty(), "no longer admitted: never forwarded");
    }

    /**
     * Four clients send requests in a loop (bounded: at most 2,000 requests and 60 s) while the policy is swapped
     * three times and a broken policy is tried once: every request is answered 200 and reaches the upstream, and
     * every one carries both tags of exactly one generation.
     */
    @Test
    void reloadUnderLoadNeverMixesGenerationsAndLosesNoRequest() throws Exception {
        start(Optional.empty());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger sent = new AtomicInteger();
        AtomicInteger ok = new AtomicInteger();
        List<String> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < 4; w++) {
            workers.add(Thread.ofVirtual().start(() -> {
                while (!stop.get() && sent.incrementAndGet() <= 2_000 && System.nanoTime() < deadline) {
                    try {
                        HttpResponse<String> r = get("/load");
                        if (r.statusCode() == 200) {
                            ok.incrementAndGet();
                        } else {
                            failures.add("status " + r.statusCode() + ": " + r.body());
                        }
                    } catch (IOException | InterruptedException e) {
                        failures.add(e.toString());
                    }
                }
            }));
        }
        List<String> generations = List.of("b", "c", "d");
        for (String g : generations) {
            upstream.arrivals.drainPermits();
            assertTrue(upstream.arrivals.tryAcquire(25, 30, TimeUnit.SECONDS), "traffic flows before the swap");
            writePolicy(tagged(g + "1", g + "2"));
            assertInstanceOf(ReloadOutcome.Installed.class, supervisor.reload());
            if (g.equals("c")) {
                upstream.arrivals.drainPermits();
                assertTrue(upstream.arrivals.tryAcquire(25, 30, TimeUnit.SECONDS));
                writePolicy("version: 1\nnetwork_middlewares: {\n");
                assertInstanceOf(ReloadOutcome.Failed.class, supervisor.reload());
            }
        }
        upstream.arrivals.drainPermits();
        assertTrue(upstream.arrivals.tryAcquire(25, 30, TimeUnit.SECONDS), "traffic flows after the last swap");
        stop.set(true);
        for (Thread t : workers) {
            assertTrue(t.join(Duration.ofSeconds(30)), "a client did not finish");
        }
        assertEquals(List.of(), failures, "every request is answered 200");
        List<RecordingUpstream.Hit> hits = upstream.hits("/load");
        assertEquals(ok.get(), hits.size(), "every request answered 200 reached the upstream exactly once");
        Set<List<String>> allowed = Set.of(List.of("a1", "a2"), List.of("b1", "b2"), List.of("c1", "c2"),
                List.of("d1", "d2"));
        for (RecordingUpstream.Hit h : hits) {
            assertTrue(allowed.contains(h.tags()), "one request saw a mix of generations: " + h.tags());
        }
        for (List<String> pair : allowed) {
            assertTrue(hits.stream().anyMatch(h -> h.tags().equals(pair)), "generation " + pair + " served");
        }
        // the broken policy changed nothing: after it, only c and then d served
        int lastC = -1;
        int firstD = hits.size();
        for (int i = 0; i < hits.size(); i++) {
            if (hits.get(i).tags().get(0).equals("c1")) {
                lastC = i;
            }
            if (hits.get(i).tags().get(0).equals("d1") && firstD == hits.size()) {
                firstD = i;
            }
        }
        assertTrue(lastC >= 0 && firstD < hits.size());
        for (int i = firstD; i < hits.size(); i++) {
            assertFalse(hits.get(i).tags().get(0).equals("a1") || hits.get(i).tags().get(0).equals("b1"),
                    "an older generation served after d was installed");
        }
    }
}
