package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A request without a body through a selected chain (issue 23: a chain that costs nothing when there is nothing to
 * scan): the hook still decides, and a request it leaves alone is forwarded exactly as a request without a chain is.
 */
class BodilessChainTest extends SharedProxy {
    @BeforeEach
    void reset() {
        fx.hook.forwardUnchained();
        fx.hook.selector = r -> ChainSelection.selected(1 << 20, false);
    }

    private static String head(String method, String extra) {
        return method + " " + fx.apiUrl("/b") + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nX-Mixed-Case:v\r\n"
                + extra + "\r\n";
    }

    private static boolean hasField(String head, String name) {
        return head.toLowerCase(Locale.ROOT).contains("\r\n" + name + ":");
    }

    @Test
    void aGetTheChainLeavesAloneIsForwardedWithItsOwnHead() throws Exception {
        try (RawClient c = fx.client()) {
            c.send(head("GET", ""));
            assertEquals(200, c.read().status());
        }
        assertEquals(1, fx.hook.evaluatedBodies.size(), "the chain still decides a bodiless request");
        assertTrue(fx.hook.evaluatedBodies.getFirst().isEmpty());
        String up = fx.upstream.take().head();
        // byte for byte: a head rebuilt from the header list would write "X-Mixed-Case: v"
        assertTrue(up.contains("\r\nX-Mixed-Case:v\r\n"), "the client's own line, as sent: " + up);
        assertFalse(hasField(up, "content-length"), "no framing added to a request without one: " + up);
    }

    @Test
    void anEmptyContentLengthStaysAsSentAndOneContinueIsSent() throws Exception {
        try (RawClient c = fx.client()) {
            c.send(head("POST", "Content-Length: 0\r\nExpect: 100-continue\r\n"));
            assertEquals(100, c.read().status());
            assertEquals(200, c.read().status(), "exactly one 100 Continue, then the answer");
        }
        String up = fx.upstream.take().head();
        assertTrue(up.toLowerCase(Locale.ROOT).contains("\r\ncontent-length: 0\r\n"), up);
        assertFalse(hasField(up, "expect"), "the expectation is hop-by-hop for this proxy: " + up);
    }

    @Test
    void aHeaderTheChainWritesOnAGetIsForwarded() throws Exception {
        fx.hook.evaluator = (r, b) -> {
            List<HttpHeader> h = new ArrayList<>(r.headers());
            h.add(new HttpHeader("x-openshell-middleware-seen", "1"));
            return new RequestVerdict.Forward(h, b);
        };
        try (RawClient c = fx.client()) {
            c.send(head("GET", ""));
            assertEquals(200, c.read().status());
        }
        String up = fx.upstream.take().head();
        assertTrue(hasField(up, "x-openshell-middleware-seen"), up);
        assertFalse(hasField(up, "content-length"), up);
    }

    @Test
    void aBodyTheChainPutsInPlaceOnAGetIsForwardedWithItsLength() throws Exception {
        fx.hook.evaluator = (r, b) -> new RequestVerdict.Forward(r.headers(), Body.ofUtf8("added"));
        try (RawClient c = fx.client()) {
            c.send(head("GET", ""));
            assertEquals(200, c.read().status());
        }
        TestUpstream.Received up = fx.upstream.take();
        assertTrue(up.head().toLowerCase(Locale.ROOT).contains("\r\ncontent-length: 5\r\n"), up.head());
        assertEquals("added", up.bodyText());
    }

    @Test
    void aBodySentWithItsHeadIsBufferedAndJudged() throws Exception {
        // head and body in one write: the read cannot block, so no deadline is started, and nothing changes
        try (RawClient c = fx.client()) {
            c.send(head("POST", "Content-Length: 5\r\n") + "hello");
            assertEquals(200, c.read().status());
        }
        assertEquals("hello", fx.hook.evaluatedBodies.getFirst().utf8().orElseThrow());
        assertEquals("hello", fx.upstream.take().bodyText());
    }
}
