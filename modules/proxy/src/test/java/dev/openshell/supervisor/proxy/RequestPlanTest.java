package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-request plan (issue 14, item 1): every request on one keep-alive connection is planned under its own
 * generation, and exactly that plan comes back to evaluate and to the credential step, also after a denial, a
 * refused admission and a request without a chain in between.
 */
class RequestPlanTest {
    @TempDir
    Path tmp;

    /** A hook whose every plan is made under a new generation: 1, 2, 3, ... */
    private static final class AlternatingHook implements RequestHook, CredentialInjection {
        final AtomicLong generations = new AtomicLong();
        final Map<String, RequestPlan> planned = new ConcurrentHashMap<>();
        final List<String> calls = new CopyOnWriteArrayList<>();

        @Override
        public RequestPlan plan(ProxyRequest request) {
            long g = generations.incrementAndGet();
            String path = request.target().path();
            AdmissionDecision admission = path.equals("/refused") ? AdmissionDecision.deny("not admitted by " + g)
                    : AdmissionDecision.allow(request.endpoint(), g);
            ChainSelection selection = path.startsWith("/chain") ? ChainSelection.selected(1024, false)
                    : ChainSelection.none();
            RequestPlan plan = RequestPlan.of(g, admission, selection);
            planned.put(request.requestId(), plan);
            calls.add("plan " + g);
            return plan;
        }

        @Override
        public HookResult evaluate(RequestPlan plan, ProxyRequest request, Body body) {
            assertSame(planned.get(request.requestId()), plan, "evaluate gets the request's own plan");
            calls.add("evaluate " + plan.generation());
            return request.target().path().equals("/chain-deny")
                    ? new HookResult.Deny(403, "middleware_denied", "denied under generation " + plan.generation())
                    : new HookResult.Forward(request.headers(), body);
        }

        @Override
        public Outcome inject(RequestPlan plan, ProxyRequest request, List<dev.openshell.middleware.spi.HttpHeader> h,
                              String rawQuery, Optional<Body> body) {
            assertSame(planned.get(request.requestId()), plan, "inject gets the request's own plan");
            calls.add("inject " + plan.generation());
            return new Outcome.Forward(h, rawQuery);
        }
    }

    @Test
    void eachRequestOnAKeepAliveConnectionIsPlannedEvaluatedAndInjectedUnderItsOwnGeneration() throws Exception {
        AlternatingHook hook = new AlternatingHook();
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.hook(hook).credentials(hook));
             RawClient c = fx.client()) {
            String host = "\r\nHost: " + fx.apiAuthority();
            c.send("POST " + fx.apiUrl("/chain-deny") + " HTTP/1.1" + host + "\r\nContent-Length: 2\r\n\r\nab");
            RawClient.Response denied = c.read();
            assertEquals(403, denied.status());
            assertTrue(denied.bodyText().contains("generation 1"), denied.bodyText());
            c.send("GET " + fx.apiUrl("/plain") + " HTTP/1.1" + host + "\r\n\r\n");
            assertEquals(200, c.read().status());
            c.send("GET " + fx.apiUrl("/refused") + " HTTP/1.1" + host + "\r\n\r\n");
            RawClient.Response refused = c.read();
            assertEquals(403, refused.status());
            assertTrue(refused.bodyText().contains("\"policy_denied\"") && refused.bodyText().contains("by 3"),
                    refused.bodyText());
            c.send("POST " + fx.apiUrl("/chain-forward") + " HTTP/1.1" + host + "\r\nContent-Length: 2\r\n\r\ncd");
            assertEquals(200, c.read().status());
            c.send("GET " + fx.apiUrl("/plain") + " HTTP/1.1" + host + "\r\n\r\n");
            assertEquals(200, c.read().status());
        }
        assertEquals(List.of("plan 1", "evaluate 1", "plan 2", "inject 2", "plan 3", "plan 4", "evaluate 4",
                "inject 4", "plan 5", "inject 5"), hook.calls);
    }
}
