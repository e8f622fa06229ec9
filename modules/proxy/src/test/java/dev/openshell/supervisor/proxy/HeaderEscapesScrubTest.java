package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Response header values that hide the injected value in HTTP's and mail's own escapes (attacker pass 5, finding 4),
 * through the real proxy: quoted-pairs in a quoted-string, RFC 2047 Q and B encoded words (several joined) and RFC
 * 2231 continuations, in a final and an interim head; the client reads the placeholder in each reading, and each
 * replacement is reported as a head replacement.
 */
class HeaderEscapesScrubTest {
    private static final String SECRET = ResponseScrubTest.SECRET;
    private static final String PLACEHOLDER = ResponseScrubTest.PLACEHOLDER;

    @TempDir
    Path tmp;

    private static String escaped(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            b.append('\\').append(c);
        }
        return b.toString();
    }

    private static String hex(String s, char mark) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            b.append(mark).append(String.format("%02X", x & 0xff));
        }
        return b.toString();
    }

    private static byte[] echo(TestUpstream.Received r) {
        String value = r.head().lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        String b64 = Base64.getEncoder().encodeToString(value.substring(6).getBytes(StandardCharsets.UTF_8));
        String fields = "WWW-Authenticate: Bearer realm=\"" + escaped(value) + "\"\r\n"
                + "Content-Disposition: attachment; filename=\"=?UTF-8?Q?" + hex(value, '=') + "?=\"\r\n"
                + "X-Words: =?UTF-8?Q?" + hex(value.substring(0, 6), '=') + "?= =?utf-8?b?" + b64 + "?=\r\n"
                + "X-Parts: attachment; name*1*=" + hex(value.substring(4), '%') + "; name*0*=UTF-8''"
                + value.substring(0, 4) + "\r\n";
        return TestUpstream.bytes("HTTP/1.1 103 Early Hints\r\n" + fields + "\r\n"
                + "HTTP/1.1 200 OK\r\n" + fields + "Content-Length: 2\r\n\r\nok");
    }

    private static void assertScrubbed(RawClient.Response r) {
        String head = r.head();
        assertFalse(head.contains(escaped(SECRET)), head);
        assertFalse(head.contains(hex(SECRET, '=')), head);
        assertEquals("Bearer realm=\"" + PLACEHOLDER + "\"", r.header("www-authenticate"));
        assertEquals("attachment; filename=\"=?UTF-8?Q?openshell=3Aresolve=3Aenv=3AAPI=5FTOKEN?=\"",
                r.header("content-disposition"));
        assertEquals("=?UTF-8?Q?openshell=3Aresolve=3Aenv=3AAPI=5FTOKEN?=", r.header("x-words"));
        assertEquals("attachment; name*1*=; name*0*=UTF-8''openshell%3Aresolve%3Aenv%3AAPI%5FTOKEN",
                r.header("x-parts"), "the later part's text removed, the first one's the placeholder");
    }

    @Test
    void escapedValuesInFinalAndInterimHeadsAreScrubbed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(HeaderEscapesScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response early = c.send(ResponseScrubTest.request(fx, "/h", "")).read();
                assertEquals(103, early.status(), early.head());
                assertScrubbed(early);
                RawClient.Response last = c.read();
                assertEquals(200, last.status(), last.head());
                assertScrubbed(last);
                assertEquals("ok", last.bodyText());
            }
            assertEquals(List.of("[API_TOKEN] 8 0"), fx.hook.scrubs,
                    "every replacement in a reading counts as a head replacement (interim and final head: one report)");
        }
    }
}
