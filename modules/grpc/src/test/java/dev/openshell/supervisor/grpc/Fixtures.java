package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.List;

/** Shared values for the tests. */
final class Fixtures {
    static final RetryPolicy FAST_RETRY = new RetryPolicy(Duration.ofMillis(20), Duration.ofMillis(200));

    private Fixtures() {
    }

    static HttpRequestEvaluation evaluation(String bindingId, Body body) {
        return evaluation(bindingId, body, Json.createObjectBuilder().add("mode", "strict").build());
    }

    static HttpRequestEvaluation evaluation(String bindingId, Body body, JsonObject config) {
        return new HttpRequestEvaluation(new BindingId(bindingId), Phase.PRE_CREDENTIALS, RequestContext.of("req-1"),
                config, new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1/chat", "a=1"),
                List.of(new HttpHeader("content-type", "application/json"), new HttpHeader("x-a", "1"),
                        new HttpHeader("x-a", "2")),
                body);
    }

    static ServiceRegistration plaintext(String name, URI endpoint, long maxBody) {
        return ServiceRegistration.builder(name, endpoint, maxBody).allowInsecure(true).build();
    }

    static ServiceRegistration plaintext(String name, URI endpoint, long maxBody, Duration timeout) {
        return ServiceRegistration.builder(name, endpoint, maxBody).allowInsecure(true).timeout(timeout).build();
    }
}
