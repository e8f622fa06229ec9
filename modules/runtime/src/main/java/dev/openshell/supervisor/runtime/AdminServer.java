package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.SupervisorMetrics;
import dev.openshell.supervisor.proxy.ProxyException;
import io.helidon.http.HeaderNames;
import io.helidon.http.Status;
import io.helidon.webserver.WebServer;
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.regex.Pattern;
import java.util.function.BooleanSupplier;

/**
 * The admin listener, separate from the proxy listener: {@code GET /metrics} (Prometheus text format),
 * {@code GET /health/live} (200 while the process serves), {@code GET /health/ready} (200 only when a runtime
 * generation is installed and the proxy listens, else 503), and the extension token keys: {@code GET
 * /.well-known/jwks.json} (the public JWKS) and {@code GET /.well-known/openid-configuration} (OIDC-shaped discovery
 * whose {@code jwks_uri} is absolute on the request's {@code Host}, else on the bound address). It starts before the
 * first {@code Describe} to a middleware service, so a service can fetch the keys for its first call. Bodies are
 * small JSON or text; nothing about requests.
 */
final class AdminServer implements AutoCloseable {
    private static final Pattern AUTHORITY = Pattern.compile("(?:[A-Za-z0-9.-]{1,253}|\\[[0-9A-Fa-f:.]{2,45}\\])"
            + "(?::[0-9]{1,5})?");
    private final WebServer server;

    private AdminServer(WebServer server) {
        this.server = server;
    }

    /**
     * Starts the listener.
     *
     * @param address where to listen (port 0 picks a free one)
     * @param metrics the metrics to serve
     * @param ready whether the supervisor is ready
     * @return the running server
     * @throws ProxyException if the address cannot be bound
     */
    static AdminServer start(InetSocketAddress address, SupervisorMetrics metrics, BooleanSupplier ready,
                             ExtensionTokenIssuer issuer) {
        WebServer server = WebServer.builder()
                .host(address.getHostString())
                .port(address.getPort())
                // Supervisor.close() stops it after the proxy has drained, so /health/ready reads 503 meanwhile;
                // Helidon's own JVM shutdown hook would close it at once on SIGTERM
                .shutdownHook(false)
                .routing(r -> r
                        .get("/metrics", (req, res) -> {
                            res.header(HeaderNames.CONTENT_TYPE, metrics.contentType());
                            res.send(metrics.scrape());
                        })
                        .get("/health/live", (req, res) -> {
                            res.header(HeaderNames.CONTENT_TYPE, "application/json");
                            res.send("{\"status\":\"UP\"}");
                        })
                        .get("/health/ready", (req, res) -> {
                            boolean up = ready.getAsBoolean();
                            res.status(up ? Status.OK_200 : Status.SERVICE_UNAVAILABLE_503);
                            res.header(HeaderNames.CONTENT_TYPE, "application/json");
                            res.send(up ? "{\"status\":\"UP\"}" : "{\"status\":\"DOWN\"}");
                        })
                        .get(ExtensionAuth.JWKS_PATH, (req, res) -> {
                            res.header(HeaderNames.CONTENT_TYPE, "application/jwk-set+json");
                            res.header(HeaderNames.CACHE_CONTROL, "max-age=60");
                            res.send(issuer.keys().jwks());
                        })
                        .get(ExtensionAuth.DISCOVERY_PATH, (req, res) -> {
                            res.header(HeaderNames.CONTENT_TYPE, "application/json");
                            res.send(ExtensionAuth.discovery(issuer, base(req.authority(), address)));
                        }))
                .build()
                .start();
        if (!server.isRunning() || server.port() <= 0) {
            server.stop();
            throw new ProxyException(dev.openshell.supervisor.proxy.ListenFailure.describe("the admin listener",
                    address));
        }
        return new AdminServer(server);
    }

    /** The URL base of the discovery's {@code jwks_uri}: the request's authority when well-formed. */
    private static URI base(String authority, InetSocketAddress bound) {
        if (authority != null && AUTHORITY.matcher(authority).matches()) {
            return URI.create("http://" + authority);
        }
        String host = bound.getHostString();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + bound.getPort());
    }

    /** {@return the bound port} */
    int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.stop();
    }
}
