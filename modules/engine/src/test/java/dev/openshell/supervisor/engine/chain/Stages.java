package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** Test fixtures: scripted providers and stage specs. */
final class Stages {
    static final HttpRequestTarget TARGET =
            new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1/chat", "");
    static final RequestContext CONTEXT = RequestContext.of("req-1");

    private Stages() {
    }

    /** A provider whose answers are scripted; records what it was given. */
    static final class Scripted implements MiddlewareProvider {
        final String id;
        final Function<HttpRequestEvaluation, HttpRequestResult> script;
        final List<HttpRequestEvaluation> seen = new CopyOnWriteArrayList<>();
        /** Whether the manifest's binding declares {@link MiddlewareBinding#skipEmptyBody()}. */
        final boolean skipEmptyBody;

        Scripted(String id, Function<HttpRequestEvaluation, HttpRequestResult> script) {
            this(id, script, false);
        }

        Scripted(String id, Function<HttpRequestEvaluation, HttpRequestResult> script, boolean skipEmptyBody) {
            this.id = id;
            this.script = script;
            this.skipEmptyBody = skipEmptyBody;
        }

        @Override
        public MiddlewareManifest manifest() {
            MiddlewareBinding b = MiddlewareBinding.httpRequest(id, EnvelopeLimits.MAX_BODY_BYTES);
            return new MiddlewareManifest("scripted", "0", List.of(skipEmptyBody ? b.skippingEmptyBody() : b));
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            seen.add(evaluation);
            return script.apply(evaluation);
        }

        int calls() {
            return seen.size();
        }
    }

    static Scripted provider(Function<HttpRequestEvaluation, HttpRequestResult> script) {
        return new Scripted("acme/test", script);
    }

    static Scripted identity() {
        return provider(e -> HttpRequestResult.allow());
    }

    /**
     * A spec builder with test defaults: matches every host, 4 MiB, 30 s (the maximum: only tests about timeouts use
     * short ones, so a slow machine never turns a test into a timeout), fail_closed, built-in.
     */
    static Spec spec(String key, long order, MiddlewareProvider provider) {
        return new Spec(key, order, provider);
    }

    static final class Spec {
        String key;
        long order;
        MiddlewareProvider provider;
        String binding = "openshell/test";
        Provenance provenance = Provenance.BUILT_IN;
        OnError onError = OnError.FAIL_CLOSED;
        int maxBody = EnvelopeLimits.MAX_BODY_BYTES;
        long timeout = 30_000;
        JsonObject config = JsonObject.EMPTY_JSON_OBJECT;
        java.util.function.Predicate<String> selector = h -> true;

        Spec(String key, long order, MiddlewareProvider provider) {
            this.key = key;
            this.order = order;
            this.provider = provider;
        }

        Spec open() {
            onError = OnError.FAIL_OPEN;
            return this;
        }

        Spec onError(OnError e) {
            onError = e;
            return this;
        }

        Spec thirdParty() {
            provenance = Provenance.THIRD_PARTY;
            binding = "acme/test";
            return this;
        }

        Spec binding(String id) {
            binding = id;
            return this;
        }

        Spec maxBody(int bytes) {
            maxBody = bytes;
            return this;
        }

        Spec timeout(long ms) {
            timeout = ms;
            return this;
        }

        Spec config(JsonObject c) {
            config = c;
            return this;
        }

        Spec hosts(String... hosts) {
            List<String> list = List.of(hosts);
            selector = list::contains;
            return this;
        }

        StageSpec build() {
            return new StageSpec(key, new BindingId(binding), provider, provenance, order, onError, maxBody, timeout,
                    config, selector);
        }
    }

    static Chain chain(StageSpec... specs) {
        return ChainSelector.of(List.of(specs)).select(TARGET.host());
    }

    static ChainRequest request(List<HttpHeader> headers, Body body) {
        return new ChainRequest(TARGET, headers, body, CONTEXT);
    }

    static ChainRequest request(String body) {
        return request(List.of(new HttpHeader("accept", "application/json"),
                new HttpHeader("authorization", "Bearer origin-secret"),
                new HttpHeader("x-request-id", "r-1")), Body.ofUtf8(body));
    }

    static JsonObject json(String text) {
        return Json.createReader(new java.io.StringReader(text)).readObject();
    }
}
