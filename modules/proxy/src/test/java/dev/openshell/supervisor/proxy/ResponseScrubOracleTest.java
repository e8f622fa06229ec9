package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacker pass 9 over loopback: the sandbox makes a bound echo host reflect {@code guess + sequences + padding} in a
 * streamed (chunked) response and compares what it gets for a guess that is a prefix of the injected key and one that
 * is not (P11-11: the first was cut, the second relayed, and 1,223 requests recovered the key); and an event stream
 * without a media type whose key is split across events with ISO 2022 sequences at the split (P11-3).
 */
class ResponseScrubOracleTest {
    private static final String SECRET = ResponseScrubTest.SECRET;
    private static final String PLACEHOLDER = ResponseScrubTest.PLACEHOLDER;
    private static final String[] SEQUENCES = {"\u001b(B", "~{", "\u000e"};

    @TempDir
    Path tmp;

    /** What the client read of one response body: its bytes, and whether the last chunk came. */
    private record Read(byte[] body, boolean complete) {
    }

    /** {@code /oracle/<p|n>/<prefix length>/<sequences>/<kind>}: the guess, the sequences, 600 bytes; 512-byte chunks. */
    private static byte[] echo(TestUpstream.Received r) {
        String head = r.head();
        String path = head.substring(head.indexOf(' ') + 1, head.indexOf(' ', head.indexOf(' ') + 1));
        String value = head.lines().filter(l -> l.toLowerCase().startsWith("x-reflect:")).findFirst()
                .map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
        String body;
        if (path.startsWith("/sse-iso2022")) {
            body = "data: \u001b$B$3$s\u001b(B\n\ndata: " + value.substring(0, 10) + "\u001b(B\n\ndata: \u001b(B"
                    + value.substring(10) + "\n\n";
        } else {
            body = new String(probe(path.substring(path.indexOf("/oracle/")), value), StandardCharsets.ISO_8859_1);
        }
        StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\n" + (path.startsWith("/sse") ? ""
                : "Content-Type: application/octet-stream\r\n") + "Transfer-Encoding: chunked\r\n\r\n");
        for (int i = 0; i < body.length(); i += 512) {
            String piece = body.substring(i, Math.min(body.length(), i + 512));
            b.append(Integer.toHexString(piece.length())).append("\r\n").append(piece).append("\r\n");
        }
        return b.append("0\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The body the echo reflects for {@code /oracle/...}. */
    private static byte[] probe(String path, String value) {
        String[] p = path.split("/");
        int k = Integer.parseInt(p[3]);
        String guess = p[2].equals("p") ? value.substring(0, k) : value.substring(0, k - 1) + "#";
        return (guess + SEQUENCES[Integer.parseInt(p[5])].repeat(Integer.parseInt(p[4])) + "x".repeat(600))
                .getBytes(StandardCharsets.ISO_8859_1);
    }

    private static Read read(ProxyFixture fx, String path) throws IOException {
        try (RawClient c = fx.client()) {
            c.socket().setSoTimeout(10_000);
            c.send(ResponseScrubTest.request(fx, path, "Connection: close\r\n"));
            String head = c.readHead();
            assertTrue(head.startsWith("HTTP/1.1 200"), head);
            return chunked(c.in());
        }
    }

    /** Decodes a chunked body until its last chunk or the end of the connection (a cut response). */
    private static Read chunked(InputStream in) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            String line = line(in);
            if (line == null || line.isEmpty()) {
                return new Read(body.toByteArray(), false);
            }
            int size = Integer.parseInt(line.split(";")[0].trim(), 16);
            if (size == 0) {
                return new Read(body.toByteArray(), true);
            }
            byte[] data = in.readNBytes(size);
            body.writeBytes(data);
            if (data.length < size || line(in) == null) {
                return new Read(body.toByteArray(), false);
            }
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) >= 0 && c != '\n') {
            sb.append((char) c);
        }
        return c < 0 && sb.isEmpty() ? null : sb.toString().replace("\r", "");
    }

    /**
     * The oracle, short: for prefixes of 1, 2 and 12 characters, a few sequence counts (up to past the 64 KiB held
     * bound) and three kinds, the prefix guess and the non-prefix guess read the same: both whole and unchanged, or
     * both cut after the same bytes, each cut audited once.
     */
    @Test
    void aPrefixGuessAndANonPrefixGuessReadTheSame() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(ResponseScrubOracleTest::echo);
            int cuts = 0;
            List<String> seen = new ArrayList<>();
            for (int k : new int[] {1, 2, 12}) {
                for (int count : new int[] {0, 3, 100, 1000, 70_000}) {
                    for (int kind = 0; kind < SEQUENCES.length; kind++) {
                        String tail = "/" + k + "/" + count + "/" + kind;
                        Read right = read(fx, "/oracle/p" + tail);
                        Read wrong = read(fx, "/oracle/n" + tail);
                        assertEquals(wrong.complete(), right.complete(), tail);
                        assertEquals(wrong.body().length, right.body().length, tail);
                        byte[] rightBody = probe("/oracle/p" + tail, SECRET);
                        assertArrayEquals(Arrays.copyOf(rightBody, right.body().length), right.body(), tail);
                        assertArrayEquals(Arrays.copyOf(probe("/oracle/n" + tail, SECRET), wrong.body().length),
                                wrong.body(), tail);
                        if (right.complete()) {
                            assertEquals(rightBody.length, right.body().length, tail);
                        } else {
                            cuts += 2;
                        }
                        seen.add(tail + " " + right.complete());
                    }
                }
            }
            assertEquals(SEQUENCES.length * 3, cuts / 2, "only the bodies past the held bound are cut: " + seen);
            assertEquals(cuts, fx.hook.unscannable.size(), "one response_uninspectable per cut");
        }
    }

    /** P11-3: the key split across events of an untyped event stream, ISO 2022 sequences at the split. */
    @Test
    void anEventStreamSplitWithSequencesAtTheSplitIsScrubbed() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = ResponseScrubTest.inject(false))) {
            fx.upstream.respond(ResponseScrubOracleTest::echo);
            Read r = read(fx, "/sse-iso2022");
            assertTrue(r.complete());
            String text = new String(r.body(), StandardCharsets.ISO_8859_1);
            String joined = text.replace("\u001b(B", "").replace("\u001b$B", "");
            assertFalse(joined.contains(SECRET.substring(0, 10)) || joined.contains(SECRET.substring(10)), text);
            assertTrue(text.contains(PLACEHOLDER), text);
        }
    }
}
