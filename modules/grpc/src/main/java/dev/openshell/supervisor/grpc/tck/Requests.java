package dev.openshell.supervisor.grpc.tck;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.supervisor.engine.chain.ChainRequest;
import dev.openshell.supervisor.engine.chain.EnvelopeSizes;
import dev.openshell.supervisor.engine.chain.StageLimits;
import dev.openshell.supervisor.engine.chain.StageLimits.Limit;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.function.ToLongFunction;

/**
 * The requests the kit sends, as the proxy would hand them to the chain engine: an OpenAI-style chat completion to
 * {@code api.example.com} with nothing sensitive in it, so a well-behaved service allows it. Sizes are exact: bodies
 * in bytes, envelope parts in encoded bytes as the engine measures them ({@link EnvelopeSizes}).
 */
final class Requests {
    static final String HOST = "api.example.com";
    private static final String PATH = "/v1/chat/completions";
    private static final String JSON_HEAD = "{\"model\":\"tck-model\",\"messages\":[{\"role\":\"user\",\"content\":\"";
    private static final String JSON_TAIL = "\"}]}";
    private static final String WORDS = "the quick brown fox jumps over the lazy dog while the conformance kit counts ";

    private Requests() {
    }

    /** {@return a chat-completions JSON body of exactly {@code size} bytes (plain text below the JSON frame)} */
    static Body json(int size) {
        int frame = JSON_HEAD.length() + JSON_TAIL.length();
        if (size < frame) {
            return Body.ofOwned(filler(size).getBytes(StandardCharsets.US_ASCII));
        }
        return Body.ofOwned((JSON_HEAD + filler(size - frame) + JSON_TAIL).getBytes(StandardCharsets.US_ASCII));
    }

    private static String filler(int n) {
        StringBuilder b = new StringBuilder(n);
        while (b.length() < n) {
            b.append(WORDS, 0, Math.min(WORDS.length(), n - b.length()));
        }
        return b.toString();
    }

    private static List<HttpHeader> baseHeaders(Body body) {
        return List.of(new HttpHeader("host", HOST), new HttpHeader("content-type", "application/json"),
                new HttpHeader("content-length", Integer.toString(body.size())),
                new HttpHeader("user-agent", "openshell-tck/1"));
    }

    /**
     * {@return a request without a body: {@code method} on {@code path}, with the base headers of an empty body}
     *
     * @param method the method, for example {@code GET} or {@code DELETE}
     * @param path the path, beginning with {@code /}
     * @param requestId the request ID
     */
    static ChainRequest bodiless(String method, String path, String requestId) {
        return new ChainRequest(new HttpRequestTarget("https", HOST, 443, method, path, ""), baseHeaders(Body.empty()),
                Body.empty(), RequestContext.of(requestId));
    }

    /**
     * {@return a {@code POST} of the chat-completions path carrying a probe's body and content type}
     *
     * @param probe the probe
     * @param requestId the request ID
     */
    static ChainRequest probe(Probe probe, String requestId) {
        List<HttpHeader> headers = List.of(new HttpHeader("host", HOST), new HttpHeader("content-type",
                probe.contentType()), new HttpHeader("content-length", Integer.toString(probe.body().size())),
                new HttpHeader("user-agent", "openshell-tck/1"));
        return new ChainRequest(new HttpRequestTarget("https", HOST, 443, "POST", PATH, ""), headers, probe.body(),
                RequestContext.of(requestId));
    }

    /**
     * {@return a plain request: a small target and context, four header lines}
     *
     * @param body the body
     * @param requestId the request ID
     */
    static ChainRequest plain(Body body, String requestId) {
        return new ChainRequest(new HttpRequestTarget("https", HOST, 443, "POST", PATH, ""), baseHeaders(body), body,
                RequestContext.of(requestId));
    }

    /**
     * {@return the request with every envelope part at its limit}: {@link Limit#HEADER_LINES} visible header lines
     * of {@link Limit#HEADER_BYTES} encoded bytes, a target of {@link Limit#TARGET_BYTES}, a context of
     * {@link Limit#CONTEXT_BYTES} (the config is the caller's, measured separately)
     *
     * @param body the body
     * @param limits the limits to reach
     */
    static ChainRequest fullEnvelope(Body body, StageLimits limits, String requestId) {
        String query = "tck=" + "q".repeat(pad(n -> EnvelopeSizes.target(target("tck=" + "q".repeat(n))),
                limits.get(Limit.TARGET_BYTES)));
        HttpRequestTarget target = target(query);
        int lines = limits.get(Limit.HEADER_LINES);
        List<HttpHeader> headers = new ArrayList<>(baseHeaders(body));
        // host and content-length are protected: stages never see them, so they do not count
        int visible = 2;
        List<HttpHeader> extra = new ArrayList<>();
        for (int i = visible; i < lines; i++) {
            extra.add(new HttpHeader("x-tck-%03d".formatted(i), ""));
        }
        if (!extra.isEmpty()) {
            long budget = limits.get(Limit.HEADER_BYTES) - EnvelopeSizes.headers(visible(headers));
            long each = Math.max(0, budget / extra.size() - 16);
            for (int i = 0; i < extra.size(); i++) {
                extra.set(i, new HttpHeader(extra.get(i).name(), "v".repeat((int) Math.min(each, 8192))));
            }
            int last = extra.size() - 1;
            String lastName = extra.get(last).name();
            List<HttpHeader> fixed = new ArrayList<>(headers);
            fixed.addAll(extra.subList(0, last));
            long rest = limits.get(Limit.HEADER_BYTES) - EnvelopeSizes.headers(visible(fixed));
            extra.set(last, new HttpHeader(lastName, "v".repeat(pad(n -> EnvelopeSizes.headers(
                    List.of(new HttpHeader(lastName, "v".repeat(n)))), rest))));
        }
        headers.addAll(extra);
        String id = requestId;
        long contextLimit = limits.get(Limit.CONTEXT_BYTES);
        RequestContext context = new RequestContext(id, "tck-sandbox", "tck", "w".repeat(pad(n -> EnvelopeSizes.context(
                new RequestContext(id, "tck-sandbox", "tck", "w".repeat(n), Optional.empty())), contextLimit)),
                Optional.empty());
        return new ChainRequest(target, headers, body, context);
    }

    private static HttpRequestTarget target(String query) {
        return new HttpRequestTarget("https", HOST, 443, "POST", PATH, query);
    }

    private static List<HttpHeader> visible(List<HttpHeader> headers) {
        return headers.stream().filter(h -> !h.name().equals("host") && !h.name().equals("content-length")).toList();
    }

    /**
     * {@return a config of exactly {@code limit} encoded bytes}: {@code config} plus one string entry
     * {@value Tck#PADDING_KEY}, or {@code config} itself if it is already that large
     */
    static JsonObject paddedConfig(JsonObject config, long limit) {
        if (EnvelopeSizes.config(config) >= limit) {
            return config;
        }
        IntFunction<JsonObject> with = n -> Json.createObjectBuilder(config).add(Tck.PADDING_KEY, "p".repeat(n))
                .build();
        return with.apply(pad(n -> EnvelopeSizes.config(with.apply(n)), limit));
    }

    /** {@return the largest n with size(n) <= limit (size grows with n), 0 if none} */
    static int pad(ToLongFunction<Integer> size, long limit) {
        int n = 0;
        for (int i = 0; i < 64; i++) {
            long s = size.applyAsLong(n);
            if (s == limit) {
                return n;
            }
            long step = limit - s;
            if (step < 0) {
                while (n > 0 && size.applyAsLong(n) > limit) {
                    n--;
                }
                return n;
            }
            n += (int) Math.max(1, step);
        }
        return n;
    }
}
