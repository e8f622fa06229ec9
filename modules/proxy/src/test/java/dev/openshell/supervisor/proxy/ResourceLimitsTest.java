package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Resource limits a hostile client meets (issue 18): connection caps in total and per client address (a connection
 * over a cap is closed without being served), and the deadlines for a whole request head and for a whole body
 * buffered for the chain (408, then closed; the body's budget reservation given back). Each refusal is reported to the hook by reason, which the supervisor counts in {@code supervisor_refused_total}.
 */
class ResourceLimitsTest {
    @TempDir
    Path tmp;

    private static InetAddress addr(String a) throws Exception {
        return InetAddress.getByName(a);
    }

    /** A connection that is served: one complete exchange, so its slot is surely held when this returns. */
    private static RawClient served(ProxyFixture fx, InetAddress from) throws Exception {
        RawClient c = new RawClient(fx.port, from);
        c.send(fx.get("/x"));
        assertEquals(200, c.read().status());
        return c;
    }

    @Test
    void oneClientAddressCannotTakeMoreThanItsShareOfConnections() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.maxConnections(4).maxConnectionsPerClient(2));
             RawClient a1 = served(fx, addr("127.0.0.1"));
             RawClient a2 = served(fx, addr("127.0.0.1"))) {
            try (RawClient a3 = new RawClient(fx.port, addr("127.0.0.1"))) {
                a3.send(fx.get("/x"));
                assertTrue(a3.closedByPeer(), "the third connection of one address is closed unread");
            }
            assertEquals(List.of("client_connection_limit"), fx.hook.limitRefusals);
            try (RawClient b1 = served(fx, addr("127.0.0.2"))) {
                // another client address still gets a connection
                assertEquals(1, fx.hook.limitRefusals.size());
            }
        }
    }

    @Test
    void connectionsThatNeverSendAByteCountAgainstTheCaps() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.maxConnections(8).maxConnectionsPerClient(2));
             RawClient silent1 = new RawClient(fx.port, addr("127.0.0.1"));
             RawClient silent2 = new RawClient(fx.port, addr("127.0.0.1"))) {
            // the proxy counts each silent connection when it accepts it; until both are counted a third may pass
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            boolean refused = false;
            while (!refused && System.nanoTime() < deadline) {
                try (RawClient third = new RawClient(fx.port, addr("127.0.0.1"))) {
                    third.send(fx.get("/x"));
                    refused = third.closedByPeer();
                } catch (java.io.IOException reset) {
                    refused = true; // closed before the request was written
                }
            }
            assertTrue(refused, "a third connection of an address holding two silent ones is closed unread");
            assertTrue(fx.hook.limitRefusals.contains("client_connection_limit"), fx.hook.limitRefusals.toString());
            try (RawClient other = served(fx, addr("127.0.0.2"))) {
                assertTrue(other != null, "another address is still served");
            }
        }
    }

    @Test
    void theTotalCapHoldsOverAllClientsAndASlotComesBackWhenAConnectionEnds() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.maxConnections(2).maxConnectionsPerClient(2))) {
            RawClient a = served(fx, addr("127.0.0.1"));
            try (RawClient b = served(fx, addr("127.0.0.2"));
                 RawClient c = new RawClient(fx.port, addr("127.0.0.3"))) {
                c.send(fx.get("/x"));
                assertTrue(c.closedByPeer(), "a connection over the total cap is closed unread");
                assertEquals(List.of("connection_limit"), fx.hook.limitRefusals);
                a.close();
                // the slot is given back once the proxy sees the close; a new connection is refused until then
                long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
                int status = -1;
                while (status != 200 && System.nanoTime() < deadline) {
                    try (RawClient d = new RawClient(fx.port, addr("127.0.0.3"))) {
                        d.send(fx.get("/x"));
                        status = d.read().status();
                    } catch (java.io.IOException refused) {
                        status = -1;
                    }
                }
                assertEquals(200, status, "the closed connection's slot came back");
            }
        }
    }

    @Test
    void aHeadNotCompleteWithinItsDeadlineIsAnswered408AndClosed() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.requestHeadTimeout(Duration.ofMillis(200)));
             RawClient c = fx.client()) {
            // a head without its final empty line, then silence: the deadline, not the idle timeout, ends it
            c.send("GET " + fx.apiUrl("/x") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nX-A: 1\r\n");
            RawClient.Response r = c.read();
            assertEquals(408, r.status());
            assertTrue(r.bodyText().contains("\"error\":\"request_head_timeout\""), r.bodyText());
            assertEquals("close", r.header("connection"));
            assertTrue(c.closedByPeer());
            assertEquals(List.of("request_head_timeout"), fx.hook.limitRefusals);
            assertTrue(fx.hook.selected.isEmpty(), "the unfinished request never reached the chain");
        }
    }

    @Test
    void aClientTlsHandshakeStalledInsideAConnectTunnelIsClosedAtTheHeadDeadline() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.requestHeadTimeout(Duration.ofMillis(200)));
             RawClient c = fx.client()) {
            String auth = ProxyFixture.API + ":" + fx.tlsUpstream.port();
            c.send("CONNECT " + auth + " HTTP/1.1\r\nHost: " + auth + "\r\n\r\n");
            assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
            // the first bytes of a TLS record header, then silence: the engine waits for the rest of the record
            c.send(new byte[] {0x16, 0x03, 0x01});
            assertTrue(c.closedByPeer(), "closed unanswered, before the client's 10 s read timeout");
            assertEquals(List.of("tls_handshake_timeout"), fx.hook.limitRefusals);
            assertEquals(0, fx.tlsUpstream.pending(), "nothing reached the upstream");
        }
    }

    @Test
    void theHeadDeadlineCountsFromTheFirstByteSoAnIdleKeptAliveConnectionIsNotCut() throws Exception {
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.requestHeadTimeout(Duration.ofMillis(200)));
             RawClient c = fx.client()) {
            c.send(fx.get("/x"));
            assertEquals(200, c.read().status());
            // the deadline of the first head has been finished: a second request on the same connection is served
            // whenever it comes, and nothing was refused
            c.send(fx.get("/x"));
            assertEquals(200, c.read().status());
            assertTrue(fx.hook.limitRefusals.isEmpty());
        }
    }

    @Test
    void aTrickledBodyForTheChainIsAnswered408AtItsDeadlineAndGivesItsBudgetBack() throws Exception {
        int budget = dev.openshell.middleware.spi.EnvelopeLimits.MAX_BODY_BYTES; // room for one such body only
        int big = budget - 1024;
        try (ProxyFixture fx = new ProxyFixture(tmp, true, b -> b.bodyBufferBudget(budget)
                .bodyBufferWait(Duration.ZERO).bodyBufferTimeout(Duration.ofMillis(300)))) {
            fx.hook.selector = r -> ChainSelection.selected(budget, false);
            String head = "POST " + fx.apiUrl("/upload") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\nContent-Length: " + big + "\r\n\r\n";
            try (RawClient slow = fx.client()) {
                // the head and a few body bytes, then nothing: the reservation of the whole body is held meanwhile
                slow.send(head).send(new byte[10]);
                RawClient.Response r = slow.read();
                assertEquals(408, r.status());
                assertTrue(r.bodyText().contains("\"error\":\"body_buffer_timeout\""), r.bodyText());
                assertTrue(slow.closedByPeer());
            }
            assertEquals(List.of("body_buffer_timeout"), fx.hook.limitRefusals);
            assertTrue(fx.hook.evaluatedBodies.isEmpty(), "the unfinished body never reached the chain");
            // the budget came back: with no wait allowed, a full body finds room at once
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            int status = -1;
            while (status != 200 && System.nanoTime() < deadline) {
                try (RawClient c = fx.client()) {
                    c.send(head).send(new byte[big]);
                    status = c.read().status();
                } catch (java.io.IOException refusedUnread) {
                    status = -1; // a 503 before the body is read can reset the connection while we write
                }
            }
            assertEquals(200, status, "the expired exchange gave its reservation back");
        }
    }

    @Test
    void limitsOutOfRangeAreRefusedByTheBuilder() {
        assertThrows(IllegalArgumentException.class, () -> SupervisorProxy.builder().maxConnections(0));
        assertThrows(IllegalArgumentException.class, () -> SupervisorProxy.builder().maxConnectionsPerClient(0));
        assertThrows(IllegalArgumentException.class,
                () -> SupervisorProxy.builder().requestHeadTimeout(Duration.ZERO));
        assertThrows(IllegalArgumentException.class,
                () -> SupervisorProxy.builder().bodyBufferTimeout(Duration.ofMillis(-1)));
    }
}
