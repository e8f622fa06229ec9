package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Reuse decisions of {@link UpstreamPool}: an idle connection is reused; a forced fresh acquire never reuses. */
class UpstreamPoolTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private ServerSocket server;
    private UpstreamPool pool;
    private UpstreamPool.Key key;

    @BeforeEach
    void setUp() throws IOException {
        server = new ServerSocket(0, 200, LOOPBACK);
        server.setSoTimeout(10_000);
        pool = pool(Duration.ofSeconds(5), Duration.ofSeconds(30));
        key = new UpstreamPool.Key(false, "127.0.0.1", server.getLocalPort());
    }

    @AfterEach
    void tearDown() throws IOException {
        pool.close();
        server.close();
    }

    /** {@return a pool without upstream TLS trust, a 5 s connect timeout, and {@code read} and {@code idle}} */
    private static UpstreamPool pool(Duration read, Duration idle) throws IOException {
        return new UpstreamPool(UpstreamTls.create(java.util.Optional.empty()), Duration.ofSeconds(5), read, idle);
    }

    private UpstreamPool.Connection acquire() throws IOException {
        return acquire(pool);
    }

    /** {@return a connection of {@code from} to the test's server, waiting at most 30 s} */
    private UpstreamPool.Connection acquire(UpstreamPool from) throws IOException {
        return from.acquire(key, List.of(LOOPBACK), Duration.ofSeconds(30));
    }

    @Test
    void anIdleOpenConnectionIsReused() throws IOException {
        UpstreamPool.Connection first = acquire();
        try (Socket accepted = server.accept()) {
            pool.release(first);
            UpstreamPool.Connection again = acquire();
            assertTrue(again.reused());
            assertEquals(1, pool.openedConnections());
            again.close();
        }
    }

    @Test
    void aForcedFreshAcquireNeverReuses() throws IOException {
        UpstreamPool.Connection first = acquire();
        try (Socket accepted = server.accept()) {
            pool.release(first);
            UpstreamPool.Connection fresh = pool.acquire(key, List.of(LOOPBACK), Duration.ZERO);
            try (Socket second = server.accept()) {
                assertFalse(fresh.reused());
            } finally {
                fresh.close();
            }
        }
    }

    @Test
    void anIdleConnectionIsClosedByItsIdleTimeoutWithoutAnotherRequest() throws IOException {
        try (UpstreamPool shortIdle = pool(Duration.ofMinutes(5), Duration.ofMillis(200))) {
            UpstreamPool.Connection c = acquire(shortIdle);
            try (Socket accepted = server.accept()) {
                shortIdle.release(c);
                accepted.setSoTimeout(10_000);
                // the read timeout is 5 minutes: only the idle timeout can close it before this read gives up
                assertEquals(-1, accepted.getInputStream().read(), "the proxy closed the idle connection");
            }
        }
    }

    @Test
    void aReusedConnectionWaitsForItsResponseLongerThanTheIdleTimeout() throws Exception {
        // the idle timeout bounds the time in the pool, not the wait for the response of a request that took it
        try (UpstreamPool shortIdle = pool(Duration.ofSeconds(30), Duration.ofMillis(200))) {
            UpstreamPool.Connection first = acquire(shortIdle);
            try (Socket accepted = server.accept()) {
                shortIdle.release(first);
                UpstreamPool.Connection again = acquire(shortIdle);
                assertTrue(again.reused());
                again.out().write('q');
                again.out().flush();
                accepted.setSoTimeout(10_000);
                assertEquals('q', accepted.getInputStream().read());
                Thread.sleep(600); // a slow upstream: it answers three idle timeouts after the request
                accepted.getOutputStream().write('r');
                again.awaitReadable();
                assertEquals('r', again.in().peek());
                again.close();
            }
        }
    }

    @Test
    void aReusedConnectionWithoutAResponseFailsAsAReadTimeout() throws IOException {
        try (UpstreamPool shortRead = pool(Duration.ofMillis(300), Duration.ofSeconds(30))) {
            UpstreamPool.Connection first = acquire(shortRead);
            try (Socket accepted = server.accept()) {
                shortRead.release(first);
                UpstreamPool.Connection again = acquire(shortRead);
                assertTrue(again.reused());
                long start = System.nanoTime();
                UpstreamIOException e = assertThrows(UpstreamIOException.class, again::awaitReadable);
                assertTrue(UpstreamPool.isTimeout(e), "a read timeout: " + e);
                assertTrue(System.nanoTime() - start >= Duration.ofMillis(300).toNanos() - shortRead.tick().toNanos(),
                        "not before the read timeout");
                accepted.setSoTimeout(10_000);
                assertEquals(-1, accepted.getInputStream().read(), "the timed-out connection is closed");
            }
        }
    }

    @Test
    void aBurstOf128ConcurrentConnectionsIsKeptWholeAndReusedWithoutOpeningAnother() throws IOException {
        int n = 128;
        List<UpstreamPool.Connection> inFlight = new java.util.ArrayList<>();
        List<Socket> accepted = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                inFlight.add(acquire());
                accepted.add(server.accept());
            }
            inFlight.forEach(pool::release);
            inFlight.clear();
            for (int i = 0; i < n; i++) {
                UpstreamPool.Connection c = acquire();
                inFlight.add(c);
                assertTrue(c.reused(), "connection " + i + " of the second burst was not reused");
            }
            assertEquals(n, pool.openedConnections());
        } finally {
            inFlight.forEach(UpstreamPool.Connection::close);
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
}
