package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.spi.EnvelopeLimits;
import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.TimeUnit;

/**
 * A grpc-java test double server on 127.0.0.1 (a free port chosen by the OS, or a given one to simulate a restart),
 * plaintext, with message limits that cover the 4 MiB body plus envelope. Stops itself on close.
 */
final class TestServer implements AutoCloseable {
    private final Server server;

    private TestServer(Server server) {
        this.server = server;
    }

    static TestServer start(BindableService service) throws IOException {
        return start(service, 0);
    }

    static TestServer start(BindableService service, int port) throws IOException {
        Server s = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .maxInboundMessageSize(EnvelopeLimits.MIN_GRPC_MESSAGE_BYTES)
                .addService(service)
                .build()
                .start();
        return new TestServer(s);
    }

    int port() {
        return server.getPort();
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + port());
    }

    /** Stops accepting and cancels every call in flight, waiting until the port is released. */
    @Override
    public void close() {
        server.shutdownNow();
        try {
            server.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
