package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.time.Duration;

/**
 * Relays bytes both ways between the client and an upstream connection until either side ends: after a
 * {@code 101 Switching Protocols} to a WebSocket upgrade (RFC 6455; frames are relayed without inspection), and for a
 * {@code tls: skip} tunnel. Closes the client socket at the end. The home of WebSocket frame inspection.
 */
final class UpgradeRelay {
    private UpgradeRelay() {
    }

    /**
     * Relays until either side closes, then closes both.
     *
     * @param client the client side
     * @param c the upstream connection
     * @param idle the idle limit of the upstream read side
     */
    static void relay(ClientStream client, UpstreamPool.Connection c, Duration idle) {
        c.readTimeout(idle);
        Thread toUpstream = Thread.ofVirtual().name("proxy-relay-up").start(() -> {
            try {
                client.in.transferToEnd(c.out());
            } catch (IOException e) {
                // either side closed
            } finally {
                c.shutdownOutput();
            }
        });
        try {
            c.in().transferToEnd(client.out);
        } catch (IOException e) {
            // either side closed
        } finally {
            try {
                client.out.flush();
            } catch (IOException ignored) {
                // client gone
            }
            c.close();
            client.closer.run();
        }
        try {
            toUpstream.join(Duration.ofSeconds(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
