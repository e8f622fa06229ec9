package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The framing fields of a head without a body ({@code HEAD}, {@code 1xx}, {@code 204}, {@code 304}) are forwarded as
 * information, so an upstream that reflects the injected value into {@code Content-Length} or
 * {@code Transfer-Encoding} there would hand it to the client (Python's {@code http.client}, requests and Node read
 * such a value as a string; attacker pass 21, P27-1): through the real proxy, such a field is dropped, counted as a
 * head replacement (so audited), and a well-formed one is kept; a response with a body and such a length is refused.
 */
class FramingFieldsScrubTest {
    private static final String SECRET = ResponseScrubTest.SECRET;

    @TempDir
    Path tmp;

    private static byte[] reflect(TestUpstream.Received r) {
        String value = r.head().lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        String path = r.head().lines().findFirst().orElseThrow().split(" ")[1];
        String head = switch (path.substring(path.lastIndexOf('/'))) {
            case "/head" -> "HTTP/1.1 200 OK\r\nContent-Length: " + value + "\r\n";
            case "/204" -> "HTTP/1.1 204 No Content\r\nTransfer-Encoding: " + value + "\r\n";
            case "/304" -> "HTTP/1.1 304 Not Modified\r\nContent-Length: " + value + "\r\nTransfer-Encoding: "
                    + value + ", chunked\r\n";
            case "/103" -> "HTTP/1.1 103 Early Hints\r\nContent-Length: " + value + "\r\nLink: </a>\r\n\r\n"
                    + "HTTP/1.1 204 No Content\r\n";
            case "/split" -> "HTTP/1.1 200 OK\r\nContent-Length: " + value.substring(0, 9) + "\r\nX-A: "
                    + value.substring(9) + "\r\n";
            case "/reason" -> "HTTP/1.1 200  " + value.substring(9) + "\r\nX-A: " + value.substring(0, 9) + "\r\n";
            case "/reason2" -> "HTTP/1.1 200 " + value.substring(0, 9) + " \t\r\nX-A: " + value.substring(9) + "\r\n";
            case "/plain" -> "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n";
            default -> "HTTP/1.1 200 OK\r\nContent-Length: " + value + "\r\n";
        };
        return TestUpstream.bytes(head + "\r\n");
    }

    private static String request(ProxyFixture fx, String method, String path) {
        return method + " " + fx.apiUrl(path) + " HTTP/1.1\r\nHost: " + fx.apiAuthority() + "\r\nX-Reflect: "
                + ResponseScrubTest.PLACEHOLDER + "\r\n\r\n";
    }

    @ParameterizedTest
    @ValueSource(strings = {"/head", "/204", "/304", "/103", "/split"})
    void aFramingFieldOfAHeadWithoutABodyThatHoldsTheValueIsDropped(String path) throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(FramingFieldsScrubTest::reflect);
            String method = path.equals("/head") || path.startsWith("/split") || path.startsWith("/reason") ? "HEAD"
                    : "GET";
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(request(fx, method, path)).read(method.equals("HEAD"));
                if (path.equals("/103")) {
                    assertEquals(103, r.status(), r.head());
                    assertEquals("</a>", r.header("link"), "the other fields stay");
                    assertNull(r.header("content-length"), r.head());
                    r = c.read();
                }
                String all = r.head() + new String(r.body(), StandardCharsets.ISO_8859_1);
                assertFalse(all.contains(SECRET), all);
                assertFalse(all.contains(SECRET.substring(0, 9)), "not even the part in a length: " + all);
                assertNull(r.header("content-length"), r.head());
                assertNull(r.header("transfer-encoding"), r.head());
            }
            assertEquals(1, fx.hook.scrubs.size(), "audited as a scrubbed response: " + fx.hook.scrubs);
        }
    }

    /** A value split between a field and the reason phrase, in either order, around the white space clients strip. */
    @ParameterizedTest
    @ValueSource(strings = {"/reason", "/reason2"})
    void aValueSplitBetweenAFieldAndTheReasonPhraseIsReplaced(String path) throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(FramingFieldsScrubTest::reflect);
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(request(fx, "HEAD", path)).read(true);
                String joined = r.head().lines().findFirst().orElseThrow().substring(12).strip() + "|"
                        + r.header("x-a");
                assertFalse(joined.contains(SECRET.substring(0, 9)) || joined.contains(SECRET.substring(9)), joined);
                assertTrue(joined.contains(ResponseScrubTest.PLACEHOLDER), joined);
            }
            assertEquals(1, fx.hook.scrubs.size(), "audited as a scrubbed response: " + fx.hook.scrubs);
        }
    }

    @Test
    void aWellFormedLengthOfAHeadResponseIsKept() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(FramingFieldsScrubTest::reflect);
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(request(fx, "HEAD", "/plain")).read(true);
                assertEquals(200, r.status(), r.head());
                assertEquals("12", r.header("content-length"), r.head());
            }
            assertEquals(List.of(), fx.hook.scrubs);
        }
    }

    @Test
    void aResponseWithABodyAndSuchALengthIsRefused() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(FramingFieldsScrubTest::reflect);
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(request(fx, "GET", "/body")).read();
                assertEquals(502, r.status(), r.head());
                assertFalse((r.head() + r.bodyText()).contains(SECRET), r.head());
            }
        }
    }
}
