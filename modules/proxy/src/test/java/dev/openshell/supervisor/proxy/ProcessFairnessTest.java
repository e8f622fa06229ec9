package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fairness between the processes of one client address (issue 41, item 3): a process that holds its address's whole
 * connection share, and then as many connections beyond it as one process may, does not shut out another process of
 * the same address; only the connections over the address's share are tied to their process. The process behind a
 * connection is given by a test owner function (here keyed by the client port: two processes of one address). A
 * connection the client closed keeps its slot until the proxy has read its end: the test waits for that (the
 * proxy's count of open connections) before it opens the next one, never for a fixed time.
 */
class ProcessFairnessTest {
    private static final long FLOOD = 1001;
    private static final long VICTIM = 1002;

    @TempDir
    Path tmp;

    private static String get(ProxyFixture fx) {
        return "GET " + fx.apiUrl("/v") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\n\r\n";
    }

    /**
     * Waits until the proxy counts {@code n} open client connections: a connection the client closed is counted until
     * the proxy has read its end and given back its slot, which happens later, on the proxy's thread.
     */
    private static void awaitOpen(ProxyFixture fx, int n) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
        while (fx.proxy.openConnections() != n) {
            assertTrue(System.nanoTime() < deadline, "the proxy still counts " + fx.proxy.openConnections()
                    + " open connections, not " + n);
            java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
    }

    @Test
    void aFloodFromOneProcessDoesNotStarveAnotherProcessOfTheSameAddress() throws Exception {
        Set<Integer> victimPorts = ConcurrentHashMap.newKeySet();
        AtomicInteger lookups = new AtomicInteger();
        List<RawClient> flood = new ArrayList<>();
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.maxConnectionsPerClient(4)
                .maxConnectionsPerProcess(2).connectionOwner(c -> {
                    lookups.incrementAndGet();
                    return OptionalLong.of(victimPorts.contains(c.client().orElseThrow().getPort()) ? VICTIM : FLOOD);
                }))) {
            try {
                // the flood: its address's share (4) and then its own 2 beyond it, each kept open after a 200
                for (int i = 0; i < 6; i++) {
                    RawClient c = new RawClient(fx.port);
                    flood.add(c);
                    assertEquals(200, c.send(get(fx)).read().status());
                }
                assertEquals(2, lookups.get(), "only the connections over the address's share are tied to a process");
                try (RawClient more = new RawClient(fx.port)) {
                    assertEquals(-1, more.in().read(), "the flood's next connection is closed unserved");
                }
                assertEquals(List.of("process_connection_limit"), fx.hook.limitRefusals);
                awaitOpen(fx, flood.size()); // the refused one holds no slot
                for (int i = 0; i < 5; i++) { // the victim process, same address, a fresh connection each time
                    Socket s = new Socket();
                    s.bind(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
                    victimPorts.add(s.getLocalPort());
                    s.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), fx.port));
                    try (RawClient victim = new RawClient(s)) {
                        assertEquals(200, victim.send(get(fx)).read().status(), "the other process is served");
                    }
                    // the victim's closed connection holds its process's slot until the proxy reads its end: the next
                    // one may only be expected in once it is given back (else a third would be over the process's 2)
                    awaitOpen(fx, flood.size());
                }
                assertEquals(List.of("process_connection_limit"), fx.hook.limitRefusals);
            } finally {
                for (RawClient c : flood) {
                    c.close();
                }
            }
        }
    }

    @Test
    void withoutAnOwnerTheAddressShareIsAHardCap() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.maxConnectionsPerClient(2));
             RawClient a = new RawClient(fx.port); RawClient b = new RawClient(fx.port)) {
            assertEquals(200, a.send(get(fx)).read().status());
            assertEquals(200, b.send(get(fx)).read().status());
            try (RawClient c = new RawClient(fx.port)) {
                assertEquals(-1, c.in().read());
            }
            assertTrue(fx.hook.limitRefusals.equals(List.of("client_connection_limit")), fx.hook.limitRefusals
                    .toString());
        }
    }
}
