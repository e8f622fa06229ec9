package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The declared charset of a scrubbed response (attacker pass 3, findings R3 and R4): a charset the scrub cannot read
 * the secret in ({@code utf-7}, the ISO-2022 family, a name nobody registered) and an event stream whose text is
 * UTF-16 or UTF-32 (declared as {@code text/event-stream}, or sniffed from its decoded first line) are refused with
 * {@code 502 response_uninspectable} and audited, unless the credential allows unscanned responses; the charsets the
 * scrub reads pass as before. A charset given as an RFC 2231 {@code charset*} parameter (attacker pass 4, R3b/R4b)
 * is judged the same way, and one that disagrees with a {@code charset} is refused. So is a charset the body
 * declares in itself (attacker passes 9 and 10, P11-1, P11-2, P12-1): the UTF-7 signature, an XML declaration, an
 * HTML {@code <meta>} anywhere; a streamed body whose declaration comes after its head was sent is cut off before
 * the bytes that hold it.
 */
class ResponseCharsetScrubTest {
    private static final String SECRET = ResponseScrubTest.SECRET;
    private static final String PLACEHOLDER = ResponseScrubTest.PLACEHOLDER;

    @TempDir
    Path tmp;

    /** {@return {@code s} in UTF-7 (RFC 2152), every character in one base64 run, as Python's codec may write it} */
    static byte[] utf7(String s) {
        String b64 = Base64.getEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_16BE));
        return ("+" + b64 + "-").getBytes(StandardCharsets.US_ASCII);
    }

    /** {@return {@code b} gzip-compressed} */
    private static byte[] gzip(byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(out)) {
            z.write(b);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static byte[] concat(String head, byte[] tail) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(head.getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(tail);
        return out.toByteArray();
    }

    private static byte[] response(String type, byte[] body, boolean chunked) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(TestUpstream.bytes("HTTP/1.1 200 OK\r\nContent-Type: " + type + "\r\n"
                + (chunked ? "Transfer-Encoding: chunked\r\n\r\n" : "Content-Length: " + body.length + "\r\n\r\n")));
        if (!chunked) {
            out.writeBytes(body);
            return out.toByteArray();
        }
        for (int i = 0; i < body.length; i += 8) { // the events split over small chunks
            int n = Math.min(8, body.length - i);
            out.writeBytes(TestUpstream.bytes(Integer.toHexString(n) + "\r\n"));
            out.write(body, i, n);
            out.writeBytes(TestUpstream.bytes("\r\n"));
        }
        out.writeBytes(TestUpstream.bytes("0\r\n\r\n"));
        return out.toByteArray();
    }

    /** {@return the value split across two events, in {@code charset}} */
    private static byte[] events(String value, Charset charset) {
        return ("data: " + value.substring(0, 6) + "\n\ndata: " + value.substring(6) + "\n\n").getBytes(charset);
    }

    private static byte[] echo(TestUpstream.Received r) {
        String head = r.head();
        String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
        String value = head.lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        path = path.substring(path.lastIndexOf('/'));
        boolean chunked = path.endsWith("-chunked");
        String p = chunked ? path.substring(0, path.length() - "-chunked".length()) : path;
        return switch (p) {
            case "/utf7" -> response("text/plain; charset=utf-7", utf7("key " + value), chunked);
            case "/twotypes" -> response("text/plain; charset=utf-8\r\nContent-Type: text/plain; charset=utf-7",
                    utf7("key " + value), chunked);
            case "/unknown" -> response("application/json; charset=x-nobody", ("{\"k\":\"" + value.substring(0, 4)
                    + "\"}").getBytes(StandardCharsets.UTF_8), chunked);
            case "/iso2022" -> response("text/plain; charset=\"ISO-2022-JP\"", ("a " + value.substring(0, 4) + "\u001b(B"
                    + value.substring(4)).getBytes(StandardCharsets.US_ASCII), chunked);
            case "/sse16" -> response("text/event-stream; charset=utf-16le", events(value,
                    StandardCharsets.UTF_16LE), chunked);
            case "/sse32" -> response("text/event-stream;charset=UTF-32", events(value, Charset.forName("UTF-32LE")),
                    chunked);
            case "/plain32" -> response("text/plain; charset=utf-32", events(value, Charset.forName("UTF-32LE")),
                    chunked);
            case "/plain16be" -> response("application/json; charset=utf-16", events(value,
                    StandardCharsets.UTF_16BE), chunked);
            case "/utf7ext" -> response("text/plain; charset*=utf-8''utf-7", utf7("key " + value), chunked);
            case "/utf7cont" -> response("text/plain; charset*0=utf; charset*1=-7", utf7("key " + value), chunked);
            case "/sse16ext" -> response("text/event-stream; charset*=''utf-16le", events(value,
                    StandardCharsets.UTF_16LE), chunked);
            case "/extdiffers" -> response("text/plain; charset=utf-8; charset*=''utf-16le", ("key " + value)
                    .getBytes(StandardCharsets.UTF_16LE), chunked);
            case "/ansi" -> response("text/plain; charset=ANSI_X3.4-1968", ("key " + value)
                    .getBytes(StandardCharsets.US_ASCII), chunked);
            case "/sse8" -> response("text/event-stream; charset=UTF-8", events(value, StandardCharsets.UTF_8),
                    chunked);
            case "/latin1" -> response("text/plain; charset=\"ISO-8859-1\"", ("key " + value)
                    .getBytes(StandardCharsets.ISO_8859_1), chunked);
            case "/text16" -> response("text/plain; charset=utf-16le", ("key " + value)
                    .getBytes(StandardCharsets.UTF_16LE), chunked);
            case "/sig7" -> response("application/octet-stream", concat("+/v8-Your key: ", utf7(value)), chunked);
            case "/meta7" -> response("text/html; charset=utf-8", concat("<html><head><meta charset=\"utf-7\">"
                    + "</head><body>", utf7(value)), chunked);
            case "/equiv7" -> response("text/html", concat("<html>" + "<!-- pad -->".repeat(70) + "<META http-equiv"
                    + "=Content-Type content='text/html; charset=UTF7'>", utf7(value)), chunked);
            case "/xml7" -> response("application/xml; charset=utf-8", concat("<?xml version=\"1.0\" encoding="
                    + "\"UTF-7\"?><a>", utf7(value)), chunked);
            case "/late7" -> response("text/html", concat("<html><head><!--" + "a".repeat(1100) + "--><meta"
                    + " charset=\"utf-7\"></head><body>Your key: ", utf7(value)), chunked);
            case "/lateequiv" -> response("text/html; charset=utf-8", concat("<p>" + "b".repeat(5000) + "<meta"
                    + " http-equiv=Content-Type content=\"text/html; charset=utf-7\">", utf7(value)), chunked);
            case "/late7big" -> response("application/octet-stream", concat(" ".repeat(100_000)
                    + "<meta charset=utf-7>", utf7(value)), chunked);
            case "/gz7" -> response("text/html", gzip(concat("<meta charset=utf-7>Your key: ", utf7(value))),
                    chunked);
            case "/gz7late" -> response("application/octet-stream", gzip(concat("<p>" + "c".repeat(5000)
                    + "<meta charset=utf-7>", utf7(value))), chunked);
            case "/xcharset" -> response("text/html; x-charset=utf-7", concat("Your key: ", utf7(value)), chunked);
            case "/lead7" -> response("text/html", concat("<meta charset=\" utf-7\">", utf7(value)), chunked);
            case "/xmlmid" -> response("text/html", concat("<!-- c --><?xml version=\"1.0\" encoding=\"utf-7\"?>",
                    utf7(value)), chunked);
            case "/metalatin" -> response("text/html", ("<meta charset='iso-8859-1'>key " + value)
                    .getBytes(StandardCharsets.ISO_8859_1), chunked);
            default -> TestUpstream.ok("plain");
        };
    }

    @Test
    void aCharsetTheScrubCannotReadOrWideEventsAreRefusedAndAudited() throws Exception {
        List<String> refused = List.of("/utf7", "/twotypes", "/unknown", "/iso2022", "/sse16", "/sse32", "/plain32",
                "/plain16be", "/utf7ext", "/utf7cont", "/sse16ext", "/extdiffers", "/sig7", "/meta7", "/equiv7",
                "/xml7", "/late7", "/lateequiv", "/gz7", "/gz7late", "/xcharset", "/lead7", "/xmlmid");
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(ResponseCharsetScrubTest::echo);
            List<String> expected = new ArrayList<>();
            for (String path : refused) {
                for (String framing : List.of("", "-chunked")) {
                    String raw = refusedOrCut(fx, path + framing);
                    assertTrue(raw.startsWith("HTTP/1.1 502") || framing.equals("-chunked"), path + ": " + raw);
                    expected.add("response_uninspectable false");
                }
            }
            assertEquals(expected, fx.hook.unscannable);
            assertEquals(List.of(), fx.hook.refusals, "audited once, as uninspectable");
        }
    }

    /**
     * Attacker pass 10, P12-1: a {@code <meta>} declaring UTF-7 after 1,100 and 5,000 bytes, and after 100,000 bytes
     * of a body with a length too long to read whole (so streamed): a body read whole is refused, a streamed one is
     * cut off before the bytes that hold the declaration, audited once.
     */
    @Test
    void aDeclarationPastTheFirstKilobyteIsReadToo() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(ResponseCharsetScrubTest::echo);
            assertTrue(refusedOrCut(fx, "/late7").startsWith("HTTP/1.1 502"));
            assertTrue(refusedOrCut(fx, "/lateequiv").startsWith("HTTP/1.1 502"));
            String big = refusedOrCut(fx, "/late7big");
            assertTrue(big.startsWith("HTTP/1.1 200"), "streamed: the head went before the declaration came");
            refusedOrCut(fx, "/late7big-chunked");
            assertEquals(List.of("response_uninspectable false", "response_uninspectable false",
                    "response_uninspectable false", "response_uninspectable false"), fx.hook.unscannable);
        }
    }

    /**
     * {@return what a client read for {@code path} on its own connection, to the connection's end}: a 502
     * {@code response_uninspectable} or a response cut off (no last chunk), never the value in any spelling sent, nor
     * the bytes that declared the charset
     */
    private static String refusedOrCut(ProxyFixture fx, String path) throws Exception {
        try (RawClient c = fx.client()) {
            c.send(ResponseScrubTest.request(fx, path, "Connection: close\r\n"));
            String raw = ResponseCutOffTest.readToEnd(c);
            if (raw.startsWith("HTTP/1.1 502")) {
                assertTrue(raw.contains("\"error\":\"response_uninspectable\""), raw);
            } else {
                assertTrue(raw.startsWith("HTTP/1.1 200"), path + ": " + raw);
                assertFalse(raw.endsWith("0\r\n\r\n"), path + ": cut off, no last chunk");
                assertFalse(raw.toLowerCase(java.util.Locale.ROOT).contains("utf-7")
                        || raw.toLowerCase(java.util.Locale.ROOT).contains("utf7"), path + ": the declaration went");
            }
            for (byte[] form : List.of(SECRET.getBytes(StandardCharsets.US_ASCII), utf7(SECRET), utf7("key " + SECRET))) {
                assertFalse(raw.contains(new String(form, StandardCharsets.ISO_8859_1)), path + ": " + raw);
            }
            return raw;
        }
    }

    @Test
    void charsetsTheScrubReadsPassScrubbed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(ResponseCharsetScrubTest::echo);
            try (RawClient c = fx.client()) {
                for (String framing : List.of("", "-chunked")) {
                    RawClient.Response sse = c.send(ResponseScrubTest.request(fx, "/sse8" + framing, "")).read();
                    assertEquals(200, sse.status());
                    assertEquals(PLACEHOLDER, sse.bodyText().replace("data: ", "").replace("\n", ""));
                    RawClient.Response latin = c.send(ResponseScrubTest.request(fx, "/latin1" + framing, "")).read();
                    assertEquals("key " + PLACEHOLDER, latin.bodyText());
                    RawClient.Response meta = c.send(ResponseScrubTest.request(fx, "/metalatin" + framing, ""))
                            .read();
                    assertEquals("<meta charset='iso-8859-1'>key " + PLACEHOLDER, meta.bodyText());
                    RawClient.Response ansi = c.send(ResponseScrubTest.request(fx, "/ansi" + framing, "")).read();
                    assertEquals("key " + PLACEHOLDER, ansi.bodyText());
                    RawClient.Response wide = c.send(ResponseScrubTest.request(fx, "/text16" + framing, "")).read();
                    assertEquals(200, wide.status());
                    assertEquals("key " + PLACEHOLDER, new String(wide.body(), StandardCharsets.UTF_16LE));
                }
            }
            assertEquals(List.of(), fx.hook.unscannable);
        }
    }

    @Test
    void anUnreadableCharsetIsRelayedWhenTheCredentialAllowsIt() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(true))) {
            fx.upstream.respond(ResponseCharsetScrubTest::echo);
            try (RawClient c = fx.client()) {
                RawClient.Response r = c.send(ResponseScrubTest.request(fx, "/utf7", "")).read();
                assertEquals(200, r.status());
                assertEquals("text/plain; charset=utf-7", r.header("content-type"));
                for (String path : List.of("/meta7", "/sig7-chunked")) { // declared in the body: audited once too
                    RawClient.Response m = c.send(ResponseScrubTest.request(fx, path, "")).read();
                    assertEquals(200, m.status(), path);
                }
            }
            assertEquals(List.of("response_uninspectable true", "response_uninspectable true",
                    "response_uninspectable true"), fx.hook.unscannable);
        }
    }
}
