package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Load shedding beyond the middleware work bound (issue 41, item 3): with every evaluation place taken and the queue
 * full, a request whose chain would run is answered {@code 503 middleware_admission_exhausted} with
 * {@code Retry-After}, without being evaluated, and each one is reported as a limit refusal (the runtime writes its
 * OCSF event and counts {@code supervisor_requests_shed_total}); once the place is free, requests are evaluated again,
 * and requests without a chain never take a place. Stages are held with latches.
 */
class LoadSheddingTest {
    @TempDir
    Path tmp;

    private static String post(ProxyFixture fx, String body) {
        return "POST " + fx.apiUrl("/upload") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nContent-Length: "
                + body.length() + "\r\n\r\n" + body;
    }

    @Test
    void beyondTheBoundEachRequestIsShedWith503RetryAfterAndReported() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.maxMiddlewareWork(1).maxQueuedMiddlewareWork(0));
             ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            fx.hook.selector = r -> r.target().path().equals("/plain") ? ChainSelection.none()
                    : ChainSelection.selected(1024, false);
            fx.hook.holdBodiesOf("hold".length(), held, release);
            CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> {
                try (RawClient c = new RawClient(fx.port)) {
                    c.socket().setSoTimeout(60_000);
                    return c.send(post(fx, "hold")).read().status();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, threads);
            assertTrue(held.await(60, TimeUnit.SECONDS), "the first request holds the only place");
            int evaluated = fx.hook.evaluatedBodies.size();
            for (String from : List.of("127.0.0.1", "127.0.0.2", "127.0.0.1")) {
                try (RawClient c = new RawClient(fx.port, InetAddress.getByName(from))) {
                    RawClient.Response r = c.send(post(fx, "shed me")).read();
                    assertEquals(503, r.status());
                    assertEquals("1", r.header("retry-after"));
                    assertTrue(r.bodyText().contains("\"error\":\"middleware_admission_exhausted\""), r.bodyText());
                }
            }
            assertEquals(evaluated, fx.hook.evaluatedBodies.size(), "a shed request is never evaluated");
            assertEquals(List.of("middleware_admission_exhausted", "middleware_admission_exhausted",
                    "middleware_admission_exhausted"), fx.hook.limitRefusals, "each shed request is reported once");
            for (ProxyRefusal r : fx.hook.refusals) {
                assertEquals(503, r.status());
                assertEquals(ProxyRefusal.Kind.LIMIT, r.kind());
                assertTrue(r.destination().isPresent() && r.method().equals(java.util.Optional.of("POST")),
                        r.toString());
            }
            try (RawClient c = new RawClient(fx.port)) {
                c.send(fx.get("/plain"));
                assertEquals(200, c.read().status(), "a request without a chain takes no place");
            }
            release.countDown();
            assertEquals(200, first.get(60, TimeUnit.SECONDS));
            try (RawClient c = new RawClient(fx.port)) {
                assertEquals(200, c.send(post(fx, "after")).read().status(), "the place is given back");
            }
            assertEquals(3, fx.hook.limitRefusals.size());
        }
    }
}
