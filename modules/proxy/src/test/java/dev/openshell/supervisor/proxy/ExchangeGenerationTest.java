package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One exchange, one policy generation: every request on one keep-alive connection is served whole by the policy
 * steps read when it began, and each later step of it gets exactly the plan its own plan step made, also after a
 * denial, a refused admission and a request without a chain in between.
 */
class ExchangeGenerationTest {
    @TempDir
    Path tmp;

    /** Policy steps of a new generation on every read: 1, 2, 3, ... Generation 3 admits nothing. */
    private static final class Alternating implements Supplier<PolicySteps<Long>> {
        final AtomicLong generations = new AtomicLong();
        final List<String> calls = new CopyOnWriteArrayList<>();

        @Override
        public PolicySteps<Long> get() {
            long g = generations.incrementAndGet();
            return new PolicySteps<>(g,
                    (host, port, client) -> {
                        calls.add("admit " + g);
                        return g == 3 ? AdmissionDecision.deny("not admitted by " + g)
                                : AdmissionDecision.allow(EndpointFacts.of("p"));
                    },
                    request -> {
                        calls.add("plan " + g);
                        return new Planned<>(g, request.target().path().startsWith("/chain")
                                ? ChainSelection.selected(1024, false) : ChainSelection.none());
                    },
                    (plan, request, body) -> {
                        assertEquals(g, plan, "L7 gets its own generation's plan");
                        return new L7Verdict.Unruled();
                    },
                    (plan, request, body) -> {
                        assertEquals(g, plan, "the chain gets its own generation's plan");
                        calls.add("evaluate " + plan);
                        return request.target().path().equals("/chain-deny")
                                ? new RequestVerdict.Refuse(new Answer(403, "middleware_denied", "denied under"
                                        + " generation " + plan))
                                : new RequestVerdict.Forward(request.headers(), body);
                    },
                    (plan, request, out) -> {
                        assertEquals(g, plan, "credentials get their own generation's plan");
                        calls.add("inject " + plan);
                        return new CredentialVerdict.Forward(out.headers(), out.rawQuery());
                    },
                    (Optional<Long> plan, ExchangeRecord record) -> plan.ifPresent(p -> assertEquals(g, p)));
        }
    }

    @Test
    void eachRequestOnAKeepAliveConnectionIsServedWholeByTheGenerationItBeganWith() throws Exception {
        Alternating policy = new Alternating();
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.policy(policy)); RawClient c = fx.client()) {
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
        assertEquals(List.of("admit 1", "plan 1", "evaluate 1", "admit 2", "plan 2", "inject 2", "admit 3",
                "admit 4", "plan 4", "evaluate 4", "inject 4", "admit 5", "plan 5", "inject 5"), policy.calls);
        assertEquals(5, policy.generations.get(), "one read of the policy steps per exchange");
    }
}
