package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.internal.HeaderParameters;
import java.nio.charset.Charset;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The injected value reflected in one RFC 2231 / RFC 8187 extended parameter in a charset other than UTF-8 (attacker
 * pass 8, P8-0: {@code filename*=UTF-16LE''%6B%00...}, Python's {@code email} and {@code urllib} read the value),
 * through the real proxy on loopback: the client reads no reading of the field's parameters that holds it.
 */
class HeaderParametersScrubTest {
    private static final String SECRET = ResponseScrubTest.SECRET;
    private static final List<String> CHARSETS = List.of("UTF-16LE", "UTF-16BE", "UTF-16", "UTF-32LE", "IBM037");

    @TempDir
    Path tmp;

    private static String pct(String s, String charset) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(Charset.forName(charset))) {
            b.append(String.format("%%%02X", x & 0xff));
        }
        return b.toString();
    }

    private static byte[] echo(TestUpstream.Received r) {
        String value = r.head().lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        StringBuilder fields = new StringBuilder();
        for (int i = 0; i < CHARSETS.size(); i++) {
            fields.append("X-P").append(i).append(": attachment; filename*=").append(CHARSETS.get(i)).append("'en'")
                    .append(pct(value, CHARSETS.get(i))).append("\r\n");
        }
        return TestUpstream.bytes("HTTP/1.1 200 OK\r\n" + fields + "Content-Length: 2\r\n\r\nok");
    }

    @Test
    void aSingleExtendedParameterInAnyCharsetIsScrubbed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(HeaderParametersScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response last = c.send(ResponseScrubTest.request(fx, "/h", "")).read();
                assertEquals(200, last.status(), last.head());
                for (int i = 0; i < CHARSETS.size(); i++) {
                    String v = last.header("x-p" + i);
                    String field = v == null ? "" : v;
                    for (List<String> readings : HeaderParameters.readings(field, true).byName().values()) {
                        assertFalse(readings.stream().anyMatch(x -> x.contains(SECRET)), CHARSETS.get(i) + ": " + v);
                    }
                    assertFalse(field.contains(pct(SECRET, CHARSETS.get(i))), field);
                }
                assertEquals("ok", last.bodyText());
            }
        }
    }

    /** {@return {@code s} in UTF-7 (RFC 2152): one shifted run of modified base64 of its UTF-16BE, as Python reads} */
    static String utf7(String s) {
        byte[] b = s.getBytes(java.nio.charset.StandardCharsets.UTF_16BE);
        return "+" + java.util.Base64.getEncoder().withoutPadding().encodeToString(b) + "-";
    }

    /** {@return {@code s} as Python's {@code unicode_escape} codec reads it: every character a backslash-u escape} */
    static String unicodeEscape(String s, String backslash) {
        StringBuilder b = new StringBuilder();
        s.chars().forEach(c -> b.append(backslash).append(String.format("u%04x", c)));
        return b.toString();
    }

    private static byte[] echoUndecodable(TestUpstream.Received r) {
        String value = r.head().lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        String b7 = java.util.Base64.getEncoder().encodeToString(utf7(value).getBytes(
                java.nio.charset.StandardCharsets.US_ASCII));
        return TestUpstream.bytes("HTTP/1.1 200 OK\r\n"
                + "X-U0: attachment; filename*=UTF-7''" + utf7(value).replace("+", "%2B") + "\r\n"
                + "X-U1: attachment; filename*=unicode_escape''" + unicodeEscape(value, "%5C") + "\r\n"
                + "X-U2: attachment; filename*=Raw-Unicode-Escape''" + unicodeEscape(value, "%5C") + "\r\n"
                + "X-U3: =?UTF-7?B?" + b7 + "?=\r\n"
                + "X-U4: x =?unicode_escape?Q?" + unicodeEscape(value, "=5C") + "?= y\r\n"
                + "X-U5: attachment; filename*0*=utf_7''" + utf7(value).replace("+", "%2B") + "; filename*1=x\r\n"
                + "X-Ok: attachment; filename*=UTF-8''report.txt\r\n"
                + "Content-Length: 2\r\n\r\nok");
    }

    /**
     * The injected value reflected in a parameter or encoded word declared in a charset the supervisor cannot decode
     * and Python's {@code email} / {@code urllib} can (attacker pass 7, P9-4 / P9-6: UTF-7, {@code unicode_escape},
     * {@code raw_unicode_escape}): the field is dropped, not passed on as read in UTF-8; the drop is audited once for
     * the response, naming the fields (never their values), before the client has the head.
     */
    @Test
    void aParameterOrWordInACharsetThatCannotBeDecodedDropsTheField() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(HeaderParametersScrubTest::echoUndecodable);
            try (RawClient c = fx.client()) {
                RawClient.Response last = c.send(ResponseScrubTest.request(fx, "/h", "")).read();
                assertEquals(200, last.status(), last.head());
                for (int i = 0; i <= 5; i++) {
                    assertEquals(null, last.header("x-u" + i), last.head());
                }
                assertEquals("attachment; filename*=UTF-8''report.txt", last.header("x-ok"), last.head());
                assertEquals("ok", last.bodyText());
                assertEquals(List.of(List.of("x-u0", "x-u1", "x-u2", "x-u3", "x-u4", "x-u5")),
                        fx.hook.unreadableFields, "one record for the response, naming every dropped field");
            }
        }
    }

    /**
     * The same through a response stage ({@code InspectingRelay}): the fields are dropped before the stage sees the
     * head, and the drop is audited once for the response (not again by the relay it falls back to).
     */
    @Test
    void throughAResponseStageTheDropIsAuditedOnce() throws Exception {
        java.util.List<ProxyResponse> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> {
            s.credentials = ResponseScrubTest.inject(false);
            s.responses = (p, r, response) -> {
                seen.add(response);
                return new ResponseVerdict.Deliver(response.headers(), java.util.Optional.empty());
            };
        })) {
            fx.upstream.respond(HeaderParametersScrubTest::echoUndecodable);
            try (RawClient c = fx.client()) {
                RawClient.Response last = c.send(ResponseScrubTest.request(fx, "/h", "")).read();
                assertEquals(200, last.status(), last.head());
                assertEquals(null, last.header("x-u0"), last.head());
                assertEquals("ok", last.bodyText());
            }
            assertEquals(1, seen.size(), "the stage ran");
            assertEquals(List.of(List.of("x-u0", "x-u1", "x-u2", "x-u3", "x-u4", "x-u5")), fx.hook.unreadableFields);
        }
    }
}
