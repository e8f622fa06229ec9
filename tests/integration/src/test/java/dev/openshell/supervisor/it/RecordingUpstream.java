package dev.openshell.supervisor.it;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * An origin on 127.0.0.1 that records, for every request, its path and the values of
 * {@code x-openshell-middleware-tag} in field order (the example tagger plugin appends one per stage), and answers 200.
 */
final class RecordingUpstream implements AutoCloseable {
    /** One request as received. */
    record Hit(String path, List<String> tags, String body) {
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Queue<Hit> hits = new ConcurrentLinkedQueue<>();
    /** One permit per request received, for tests that wait for traffic. */
    final Semaphore arrivals = new Semaphore(0);

    RecordingUpstream() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            byte[] body = exchange.getRequestBody().readAllBytes();
            List<String> tags = new ArrayList<>();
            List<String> values = exchange.getRequestHeaders().get("x-openshell-middleware-tag");
            if (values != null) {
                for (String v : values) {
                    Arrays.stream(v.split(",")).map(String::trim).filter(t -> !t.isEmpty()).forEach(tags::add);
                }
            }
            hits.add(new Hit(exchange.getRequestURI().getPath(), List.copyOf(tags),
                    new String(body, StandardCharsets.UTF_8)));
            arrivals.release();
            byte[] reply = "ok".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, reply.length);
            exchange.getResponseBody().write(reply);
            exchange.close();
        });
        server.start();
    }

    int port() {
        return server.getAddress().getPort();
    }

    /** {@return every request received so far, in arrival order} */
    List<Hit> hits() {
        return List.copyOf(hits);
    }

    /** {@return the requests received for one path} @param path the path */
    List<Hit> hits(String path) {
        return hits.stream().filter(h -> h.path().equals(path)).toList();
    }

    @Override
    public void close() {
        server.stop(0);
        executor.close();
    }
}
