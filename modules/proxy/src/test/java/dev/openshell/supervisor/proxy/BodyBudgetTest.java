package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.EnvelopeLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The proxy-wide budget of buffered request bodies: a request whose body does not fit waits (bounded) and is then
 * refused with 503 without its body being read; the budget comes back when an exchange ends; streamed bodies never
 * count.
 */
class BodyBudgetTest {
    private static final int BUDGET = EnvelopeLimits.MAX_BODY_BYTES; // the smallest budget allowed
    private static final int BIG = BUDGET - 1024; // two of these do not fit at once

    @TempDir
    Path tmp;

    private static String post(ProxyFixture fx, int length) {
        return "POST " + fx.apiUrl("/upload") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nContent-Length: "
                + length + "\r\n\r\n";
    }

    @Test
    void aBodyThatDoesNotFitIsRefusedUnreadAndTheBudgetComesBackAfterTheExchange() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true,
                b -> b.bodyBufferBudget(BUDGET).bodyBufferWait(Duration.ofMillis(300)))) {
            CountDownLatch inHook = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            fx.hook.selector = r -> ChainSelection.selected(BUDGET, false);
            fx.hook.evaluator = (r, body) -> {
                inHook.countDown();
                try {
                    assertTrue(release.await(30, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
                return new RequestVerdict.Forward(r.headers(), body);
            };
            byte[] big = new byte[BIG];
            CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> {
                try (RawClient c = fx.client()) {
                    c.send(post(fx, BIG)).send(big);
                    return c.read().status();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            assertTrue(inHook.await(30, TimeUnit.SECONDS), "the first body is held by the chain");
            try (RawClient c = fx.client()) {
                // only the head is sent: the refusal must come without the proxy reading a body
                c.send(post(fx, BIG));
                RawClient.Response r = c.read();
                assertEquals(503, r.status());
                assertTrue(r.bodyText().contains("\"error\":\"body_buffer_busy\""), r.bodyText());
                assertEquals("close", r.header("connection"));
            }
            release.countDown();
            assertEquals(200, first.get(30, TimeUnit.SECONDS));
            fx.hook.evaluator = (r, body) -> new RequestVerdict.Forward(r.headers(), body);
            try (RawClient c = fx.client()) {
                c.send(post(fx, BIG)).send(big);
                assertEquals(200, c.read().status(), "the first exchange gave its reservation back");
            }
        }
    }

    @Test
    void streamedBodiesNeverCountAgainstTheBudget() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true,
                b -> b.bodyBufferBudget(BUDGET).bodyBufferWait(Duration.ZERO))) {
            fx.hook.selector = r -> ChainSelection.none();
            byte[] body = new byte[BUDGET + 4096]; // larger than the whole budget: streamed, not buffered
            try (RawClient c = fx.client()) {
                c.send(post(fx, body.length)).send(body);
                assertEquals(200, c.read().status());
            }
        }
    }

    @Test
    void aBudgetBelowOneLargestBodyIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SupervisorProxy.builder().bodyBufferBudget(BUDGET - 1));
        assertTrue(e.getMessage().contains("body buffer budget"), e.getMessage());
    }
}
