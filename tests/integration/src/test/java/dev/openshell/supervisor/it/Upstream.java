package dev.openshell.supervisor.it;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A loopback HTTP/1.1 upstream on 127.0.0.1 (a port the OS picks) that records every request it receives, in order,
 * and answers 200 with {@code {"ok":true}} unless a check given at start says otherwise (the SigV4 verifier answers
 * 403 for a bad signature). Tests take recorded requests from a queue: no sleeps.
 */
final class Upstream implements AutoCloseable {
    private final HttpServer server;
    private final ExecutorService executor;
    private final LinkedBlockingQueue<Received> received = new LinkedBlockingQueue<>();

    /**
     * One request as the upstream saw it.
     *
     * @param method the method
     * @param rawPath the path as sent (percent-encoding kept)
     * @param rawQuery the query as sent, without {@code ?}; empty when there is none
     * @param headers header values by lowercase name, each name's values in wire order
     * @param body the body
     * @param status the status the upstream answered
     */
    record Received(String method, String rawPath, String rawQuery, Map<String, List<String>> headers, byte[] body,
                    int status) {
        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        /** {@return the only value of a header; fails when it is absent or repeated} */
        String header(String name) {
            List<String> v = headers.getOrDefault(name, List.of());
            if (v.size() != 1) {
                throw new AssertionError("expected one " + name + " field, found " + v.size());
            }
            return v.get(0);
        }
    }

    private Upstream(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    static Upstream start() throws IOException {
        return start(r -> 200);
    }

    /** @param status decides the status to answer from the request as received */
    static Upstream start(Function<Received, Integer> status) throws IOException {
        HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
        ExecutorService ex = Executors.newCachedThreadPool();
        Upstream u = new Upstream(s, ex);
        s.setExecutor(ex);
        s.createContext("/", exchange -> {
            try (exchange) {
                byte[] body = exchange.getRequestBody().readAllBytes();
                Map<String, List<String>> headers = new LinkedHashMap<>();
                exchange.getRequestHeaders().forEach((k, v) -> headers.put(k.toLowerCase(Locale.ROOT), List.copyOf(v)));
                String query = exchange.getRequestURI().getRawQuery();
                Received r = new Received(exchange.getRequestMethod(), exchange.getRequestURI().getRawPath(),
                        query == null ? "" : query, Map.copyOf(headers), body, 0);
                int code = status.apply(r);
                u.received.add(new Received(r.method(), r.rawPath(), r.rawQuery(), r.headers(), r.body(), code));
                byte[] reply = (code == 200 ? "{\"ok\":true}" : "{\"ok\":false}").getBytes(StandardCharsets.UTF_8);
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                exchange.sendResponseHeaders(code, reply.length);
                exchange.getResponseBody().write(reply);
            }
        });
        s.start();
        return u;
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** {@return the next recorded request; fails after 30 s without one} */
    Received take() throws InterruptedException {
        Received r = received.poll(30, TimeUnit.SECONDS);
        if (r == null) {
            throw new AssertionError("the upstream received nothing within 30 s");
        }
        return r;
    }

    /** {@return whether no request is waiting to be taken} */
    boolean nothingReceived() {
        return received.isEmpty();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
