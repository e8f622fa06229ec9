package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Stuck stages contained (issue 18, item 4), through the real image: the fixture plugin {@code fixtures/spin} spins
 * on the CPU and ignores interrupts. The supervisor runs with as many virtual-thread carriers as there are spinning
 * requests ({@code -Djdk.virtualThreadScheduler.parallelism=2}), so a stage on a virtual thread would freeze every
 * virtual thread of the proxy. With plugin stages on the stage pool's platform threads, two spinning requests are
 * answered per their {@code on_error} after the binding's 200 ms timeout, their threads are counted as stuck, the
 * binding is unavailable (a third request fails at once, a High Detection Finding is written), and meanwhile
 * {@code /health/live}, a GET and a POST through another plugin's chain are served, and SIGTERM ends the process.
 */
class StuckStageIT {
    @TempDir
    static Path work;
    private static Upstream upstream;
    private static StackProcess supervisor;

    @BeforeAll
    static void start() throws Exception {
        upstream = Upstream.start();
        Path plugins = Files.createDirectories(work.resolve("plugins"));
        Path spin = Files.copy(Image.plugin("fixture-spin"), plugins.resolve("fixture-spin.jar"));
        Path echo = Files.copy(Image.plugin("fixture-process-echo"), plugins.resolve("fixture-process-echo.jar"));
        Path gateway = Files.writeString(work.resolve("gateway.toml"), """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "spin.test" = "127.0.0.1"
                "open.test" = "127.0.0.1"
                "echo.test" = "127.0.0.1"

                [openshell.supervisor.limits]
                stage_threads = 8
                max_stuck_stages_per_binding = 2
                """ + Image.pins(spin, echo));
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  all:
                    endpoints:
                      - { host: spin.test, port: %1$d }
                      - { host: open.test, port: %1$d }
                      - { host: echo.test, port: %1$d }
                network_middlewares:
                  spin_closed:
                    middleware: fixtures/spin
                    order: 10
                    endpoints: { include: [spin.test] }
                  spin_open:
                    middleware: fixtures/spin
                    order: 20
                    on_error: fail_open
                    endpoints: { include: [open.test] }
                  echo:
                    middleware: fixtures/process-echo
                    order: 30
                    endpoints: { include: [echo.test] }
                """.formatted(upstream.port()));
        supervisor = StackProcess.start(work, policy, gateway, Map.of("JDK_JAVA_OPTIONS",
                "-Djdk.virtualThreadScheduler.parallelism=2 -Djdk.virtualThreadScheduler.maxPoolSize=2"));
    }

    @AfterAll
    static void stop() throws Exception {
        if (supervisor != null) {
            supervisor.close();
        }
        if (upstream != null) {
            upstream.close();
        }
    }

    private static String url(String host) {
        return "http://" + host + ":" + upstream.port() + "/probe";
    }

    private static HttpResponse<String> get(String host) throws Exception {
        return supervisor.send(HttpRequest.newBuilder(URI.create(url(host))).timeout(Duration.ofSeconds(20)).build());
    }

    private static double metric(String name, String binding) throws Exception {
        return Prometheus.parse(supervisor.metrics()).value(name, Map.of("binding_id", binding));
    }

    @Test
    void twoSpinningStagesOnTwoCarriersLeaveTheProxyServingAndStoppable() throws Exception {
        List<Future<HttpResponse<String>>> spinning = new ArrayList<>();
        try (ExecutorService clients = Executors.newFixedThreadPool(2)) {
            for (int i = 0; i < 2; i++) {
                spinning.add(clients.submit(() -> get("spin.test")));
            }
            for (Future<HttpResponse<String>> f : spinning) {
                HttpResponse<String> r = f.get(60, TimeUnit.SECONDS);
                assertEquals(403, r.statusCode(), r.body());
                assertEquals("stage_timeout", StackProcess.json(r).getString("reason_code"), r.body());
            }
        }
        // both stages are still spinning on their platform threads (they ignore interrupts and run for minutes)
        assertEquals(2.0, metric("supervisor_stage_stuck_total", "fixtures/spin"));
        assertEquals(2.0, metric("supervisor_stage_stuck_threads", "fixtures/spin"));
        assertEquals(1.0, metric("supervisor_binding_unavailable", "fixtures/spin"));

        assertEquals(200, supervisor.admin("/health/live", Duration.ofSeconds(10)));
        HttpResponse<String> victim = get("echo.test");
        assertEquals(200, victim.statusCode(), victim.body());
        assertTrue(upstream.take().header("x-openshell-middleware-process").startsWith("java "),
                "another plugin's stage still runs on the pool (it names the client process: this test's JVM)");
        HttpResponse<String> post = supervisor.postJson(url("echo.test"), "{\"small\":true}");
        assertEquals(200, post.statusCode(), post.body());
        assertEquals("{\"small\":true}", upstream.take().text());

        HttpResponse<String> closed = get("spin.test");
        assertEquals(403, closed.statusCode());
        assertEquals("middleware_unavailable", StackProcess.json(closed).getString("reason_code"), closed.body());
        HttpResponse<String> open = get("open.test");
        assertEquals(200, open.statusCode(), "fail_open: relayed without the unavailable stage");
        upstream.take();
        assertEquals(2.0, metric("supervisor_stage_stuck_total", "fixtures/spin"),
                "an unavailable binding's stages are not run, so no new thread is stuck");

        JsonObject finding = supervisor.auditEvents().stream()
                .filter(e -> e.getInt("class_uid") == 2004 && e.getJsonObject("finding_info").getJsonArray("types")
                        .getString(0).equals("middleware.unavailable")).findFirst()
                .orElseThrow(() -> new AssertionError("no middleware.unavailable finding"));
        assertEquals(4, finding.getInt("severity_id"), "High");
        assertEquals("fixtures/spin", AuditLog.openshell(finding).getString("binding_id"));
        assertTrue(supervisor.stderr().contains("middleware binding fixtures/spin is unavailable"),
                supervisor.stderr());

        Optional<Integer> exit = supervisor.terminate(Duration.ofSeconds(30));
        assertTrue(exit.isPresent(), "SIGTERM ends the process while two stages spin");
    }
}
