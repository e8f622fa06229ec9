package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Whatever breaks the framing of a scrubbed chunked response from a hostile upstream (a bare LF after a size or
 * after data, a size that is not hex, a missing CRLF, a size larger than the data, the stream cut anywhere before its
 * end), wherever it breaks (the first chunk or a later one), as an event stream or not: the client gets either a 502
 * with the JSON error body or a 200 whose chunked body never ends with a last chunk (the connection closes), never a
 * complete-looking response; the injected credential never reaches it; and the failure is audited exactly once as
 * an upstream refusal.
 */
class ResponseCutOffPropertyTest {
    private static Path dir;
    private static ProxyFixture fx;

    @BeforeContainer
    static void start() throws Exception {
        dir = TestDirs.create("response-cut-off");
        fx = ProxyFixture.withSteps(dir, s -> s.credentials = ResponseScrubTest.inject(false));
        fx.upstream.closeSilentlyAfterResponse = true;
    }

    @AfterContainer
    static void stop() throws Exception {
        try {
            fx.close();
        } finally {
            TestDirs.delete(dir); // jqwik has no @TempDir for a container: the fixture's CA and state go here
        }
    }

    enum Break { BARE_LF_SIZE, NOT_HEX, BARE_LF_DATA, NO_CRLF, SIZE_TOO_LARGE, CUT }

    @Provide
    Arbitrary<List<String>> pieces() {
        return Arbitraries.strings().withChars("abc \n:").ofMinLength(1).ofMaxLength(60) // ':' is the value
                .map(p -> p.replace(":", ResponseScrubTest.SECRET)).list().ofMinSize(1).ofMaxSize(6);
    }

    @Property(tries = 50)
    void aBrokenScrubbedChunkedBodyIsNeverCompleteNorLeaksTheValue(@ForAll("pieces") List<String> pieces,
            @ForAll Break how, @ForAll @IntRange(min = 0, max = 5) int at, @ForAll @IntRange(max = 10_000) int cut,
            @ForAll boolean events)
            throws Exception {
        fx.hook.refusals.clear();
        fx.hook.unscannable.clear();
        int broken = at % pieces.size();
        StringBuilder body = new StringBuilder();
        for (int i = 0; i < pieces.size(); i++) {
            String p = pieces.get(i);
            String size = Integer.toHexString(p.length());
            if (i != broken) {
                body.append(size).append("\r\n").append(p).append("\r\n");
                continue;
            }
            body.append(switch (how) {
                case BARE_LF_SIZE -> size + "\n" + p + "\r\n";
                case NOT_HEX -> "g" + size + "\r\n" + p + "\r\n";
                case BARE_LF_DATA -> size + "\r\n" + p + "\n";
                case NO_CRLF -> size + "\r\n" + p + "xy";
                case SIZE_TOO_LARGE -> Integer.toHexString(p.length() + 1000) + "\r\n" + p + "\r\n";
                case CUT -> size + "\r\n" + p + "\r\n";
            });
        }
        String framed = body.append("0\r\n\r\n").toString();
        String sent = how == Break.CUT ? framed.substring(0, cut % framed.length()) : framed;
        fx.upstream.respond(r -> TestUpstream.bytes("HTTP/1.1 200 OK\r\n"
                + (events ? "Content-Type: text/event-stream\r\n" : "") + "Transfer-Encoding: chunked\r\n\r\n" + sent));
        String raw;
        try (RawClient c = fx.client()) {
            c.send(ResponseCutOffTest.request(fx, fx.apiAuthority()));
            raw = ResponseCutOffTest.readToEnd(c);
        }
        assertFalse(raw.contains(ResponseScrubTest.SECRET), raw);
        if (raw.startsWith("HTTP/1.1 502 ")) {
            assertTrue(raw.contains("\"error\":\"invalid_upstream_response\"")
                    || raw.contains("\"error\":\"upstream_failed\""), raw);
        } else {
            assertTrue(raw.startsWith("HTTP/1.1 200 "), raw);
            assertFalse(complete(raw.substring(raw.indexOf("\r\n\r\n") + 4)), () -> "a complete response: " + raw);
        }
        assertEquals(1, fx.hook.refusals.size(), fx.hook.refusals.toString());
        assertEquals(ProxyRefusal.Kind.UPSTREAM, fx.hook.refusals.get(0).kind());
        assertEquals(raw.startsWith("HTTP/1.1 502 ") ? 502 : 0, fx.hook.refusals.get(0).status());
    }

    /** {@return whether {@code chunked} is a complete chunked body, up to and including its last chunk} */
    static boolean complete(String chunked) {
        int i = 0;
        while (true) {
            int eol = chunked.indexOf("\r\n", i);
            if (eol < 0) {
                return false;
            }
            int size = Integer.parseInt(chunked.substring(i, eol), 16);
            if (size == 0) {
                return chunked.startsWith("\r\n", eol + 2);
            }
            if (eol + 2 + size + 2 > chunked.length()) {
                return false;
            }
            i = eol + 2 + size + 2;
        }
    }
}
