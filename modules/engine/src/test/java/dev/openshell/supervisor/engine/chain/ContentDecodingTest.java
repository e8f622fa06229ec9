package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import static dev.openshell.supervisor.engine.chain.Stages.chain;
import static dev.openshell.supervisor.engine.chain.Stages.request;
import static dev.openshell.supervisor.engine.chain.Stages.spec;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import jakarta.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/** The chain decodes a Content-Encoding its stages ask for, bounded against bombs (issue 17, item 2). */
class ContentDecodingTest {
    /** A provider of binding {@code openshell/test} that asks for gzip and deflate to be decoded. */
    static final class Decoding implements MiddlewareProvider {
        final Function<HttpRequestEvaluation, HttpRequestResult> script;
        final List<HttpRequestEvaluation> seen = new CopyOnWriteArrayList<>();
        final boolean asks;

        Decoding(boolean asks, Function<HttpRequestEvaluation, HttpRequestResult> script) {
            this.asks = asks;
            this.script = script;
        }

        @Override
        public MiddlewareManifest manifest() {
            MiddlewareBinding b = MiddlewareBinding.httpRequest("openshell/test", EnvelopeLimits.MAX_BODY_BYTES);
            return new MiddlewareManifest("decoding", "0", List.of(asks ? b.decoding("gzip", "deflate") : b));
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            seen.add(evaluation);
            return script.apply(evaluation);
        }
    }

    private final ChainEngine engine = ChainEngine.builder().build();

    static byte[] gzip(byte[] b) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream z = new GZIPOutputStream(out)) {
            z.write(b);
        }
        return out.toByteArray();
    }

    static byte[] deflate(byte[] b, boolean raw) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DeflaterOutputStream z = new DeflaterOutputStream(out, new Deflater(Deflater.DEFAULT_COMPRESSION, raw))) {
            z.write(b);
        }
        return out.toByteArray();
    }

    private static List<HttpHeader> headers(String coding) {
        return List.of(new HttpHeader("host", "api.example.com"), new HttpHeader("content-encoding", coding),
                new HttpHeader("content-type", "application/json"));
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static HttpRequestResult redactKey(HttpRequestEvaluation e) {
        String text = e.body().utf8().orElse("");
        return text.contains("KEY") ? HttpRequestResult.builder(Decision.ALLOW)
                .body(Body.ofUtf8(text.replace("KEY", "[REDACTED]"))).build() : HttpRequestResult.allow();
    }

    @Test
    void aStageThatAsksSeesTheDecodedBodyWithoutContentEncoding() throws IOException {
        Decoding stage = new Decoding(true, e -> HttpRequestResult.allow());
        byte[] sent = gzip(utf8("{\"a\":\"hello\"}"));
        ChainRequest req = request(headers("gzip"), Body.of(sent));
        ChainResult r = engine.run(chain(spec("s", 1, stage).build()), req);
        HttpRequestEvaluation seen = stage.seen.getFirst();
        assertEquals("{\"a\":\"hello\"}", seen.body().utf8().orElseThrow());
        assertTrue(seen.headers().stream().noneMatch(h -> h.name().equals("content-encoding")));
        assertTrue(seen.headers().stream().anyMatch(h -> h.name().equals("content-type")));
        // nothing changed, and still what was inspected is forwarded: decoded, without Content-Encoding
        assertEquals("{\"a\":\"hello\"}", r.body().utf8().orElseThrow());
        assertEquals(ContentDecoding.withoutContentEncoding(req.headers()), r.headers());
    }

    @Test
    void bytesNoStageSeesInTheGzipFormNeverLeave() throws IOException {
        // issue 23 review: a secret in the members' MTIME fields, or in FCOMMENT, is invisible to the stage, which
        // judges the decoded text; forwarding the body as sent would carry it out
        String secret = "sk-proj-" + "covertcovertcovert";
        java.io.ByteArrayOutputStream smuggled = new java.io.ByteArrayOutputStream();
        byte[] s = secret.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < s.length; i += 4) {
            byte[] member = gzip(new byte[0]);
            for (int k = 0; k < 4; k++) {
                member[4 + k] = i + k < s.length ? s[i + k] : 0; // MTIME
            }
            smuggled.write(member);
        }
        byte[] comment = utf8("comment " + secret);
        java.io.ByteArrayOutputStream withComment = new java.io.ByteArrayOutputStream();
        byte[] hi = gzip(utf8("hi"));
        withComment.write(hi, 0, 3);
        withComment.write(hi[3] | 16); // FCOMMENT
        withComment.write(hi, 4, 6);
        withComment.write(comment);
        withComment.write(0);
        withComment.write(hi, 10, hi.length - 10);
        Map<byte[], String> cases = new java.util.LinkedHashMap<>();
        cases.put(smuggled.toByteArray(), "");
        cases.put(withComment.toByteArray(), "hi");
        for (Map.Entry<byte[], String> c : cases.entrySet()) {
            Decoding stage = new Decoding(true, e -> HttpRequestResult.allow());
            ChainResult r = engine.run(chain(spec("s", 1, stage).build()),
                    request(headers("gzip"), Body.of(c.getKey())));
            assertTrue(r.forwarded());
            assertEquals(c.getValue(), stage.seen.getFirst().body().utf8().orElseThrow(), "what the stage judged");
            assertEquals(c.getValue(), new String(r.body().toByteArray(), StandardCharsets.ISO_8859_1),
                    "exactly what the stage judged is forwarded, no covert byte");
            assertTrue(r.headers().stream().noneMatch(h -> h.name().equals("content-encoding")));
        }
    }

    @Test
    void aChangedBodyIsForwardedDecodedWithoutContentEncoding() throws IOException {
        for (String coding : new String[] {"gzip", "x-gzip", "deflate", "deflate, gzip", "GZIP"}) {
            byte[] plain = utf8("{\"a\":\"my KEY here\"}");
            byte[] sent = switch (coding) {
                case "deflate" -> deflate(plain, false);
                case "deflate, gzip" -> gzip(deflate(plain, false));
                default -> gzip(plain);
            };
            Decoding stage = new Decoding(true, ContentDecodingTest::redactKey);
            ChainResult r = engine.run(chain(spec("s", 1, stage).build()), request(headers(coding), Body.of(sent)));
            assertTrue(r.forwarded(), coding);
            assertEquals("{\"a\":\"my [REDACTED] here\"}", r.body().utf8().orElseThrow(), coding);
            assertTrue(r.headers().stream().noneMatch(h -> h.name().equals("content-encoding")), coding);
        }
    }

    @Test
    void rawDeflateAndMultiMemberGzipDecodeToo() throws IOException {
        Decoding stage = new Decoding(true, ContentDecodingTest::redactKey);
        ChainResult raw = engine.run(chain(spec("s", 1, stage).build()),
                request(headers("deflate"), Body.of(deflate(utf8("raw KEY"), true))));
        assertEquals("raw [REDACTED]", raw.body().utf8().orElseThrow());
        byte[] twoMembers = concat(gzip(utf8("first ")), gzip(utf8("KEY")));
        ChainResult multi = engine.run(chain(spec("s", 1, stage).build()),
                request(headers("gzip"), Body.of(twoMembers)));
        assertEquals("first [REDACTED]", multi.body().utf8().orElseThrow());
    }

    @Test
    void aStageThatDoesNotAskSeesTheBodyAsSent() throws IOException {
        Decoding stage = new Decoding(false, e -> HttpRequestResult.allow());
        byte[] sent = gzip(utf8("hello"));
        engine.run(chain(spec("s", 1, stage).build()), request(headers("gzip"), Body.of(sent)));
        assertArrayEquals(sent, stage.seen.getFirst().body().toByteArray());
        assertTrue(stage.seen.getFirst().headers().stream().anyMatch(h -> h.name().equals("content-encoding")));
    }

    @Test
    void anUnsupportedCodingIsLeftAsSent() {
        Decoding stage = new Decoding(true, e -> HttpRequestResult.allow());
        byte[] sent = {1, 2, 3};
        engine.run(chain(spec("s", 1, stage).build()), request(headers("br"), Body.of(sent)));
        assertArrayEquals(sent, stage.seen.getFirst().body().toByteArray(), "br is not decoded: the stage decides");
        engine.run(chain(spec("s", 1, stage).build()), request(headers("gzip, br"), Body.of(sent)));
        assertArrayEquals(sent, stage.seen.get(1).body().toByteArray());
    }

    @Test
    void aDecompressionBombFailsEveryStageByItsOnError() throws IOException {
        byte[] bomb = gzip(new byte[8 * 1024 * 1024]); // 8 MiB of zeros in about 8 KiB
        Decoding closed = new Decoding(true, e -> HttpRequestResult.allow());
        ChainResult denied = engine.run(chain(spec("s", 1, closed).build()), request(headers("gzip"), Body.of(bomb)));
        assertFalse(denied.forwarded());
        assertEquals(PlatformCodes.DECODED_BODY_OVER_CAPACITY, denied.denial().orElseThrow().reasonCode());
        assertTrue(closed.seen.isEmpty(), "the stage never ran on it");

        Decoding open = new Decoding(true, e -> HttpRequestResult.allow());
        ChainResult bypassed = engine.run(chain(spec("s", 1, open).open().build()),
                request(headers("gzip"), Body.of(bomb)));
        assertTrue(bypassed.forwarded());
        assertEquals(StageResult.BYPASSED, bypassed.stages().getFirst().outcome());
        assertArrayEquals(bomb, bypassed.body().toByteArray(), "relayed as sent under fail_open");
    }

    @Test
    void theRatioLimitStopsABombUnderTheCap() throws IOException {
        byte[] zeros = gzip(new byte[1024 * 1024]); // 1 MiB from about 1 KiB: over 200:1 plus 64 KiB
        assertTrue(zeros.length * (long) ContentDecoding.MAX_RATIO + ContentDecoding.RATIO_SLACK < 1024 * 1024);
        ContentDecoding.Outcome o = ContentDecoding.decode(Body.of(zeros), List.of("gzip"),
                EnvelopeLimits.MAX_BODY_BYTES);
        assertEquals(PlatformCodes.DECODED_BODY_OVER_CAPACITY, ((ContentDecoding.Outcome.Failed) o).code());
    }

    @Test
    void corruptDataIsAFailure() {
        Decoding stage = new Decoding(true, e -> HttpRequestResult.allow());
        byte[] corrupt = {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff, 1, 2, 3};
        ChainResult r = engine.run(chain(spec("s", 1, stage).build()), request(headers("gzip"), Body.of(corrupt)));
        assertEquals(PlatformCodes.BODY_DECODING_FAILED, r.denial().orElseThrow().reasonCode());
        ChainResult t = engine.run(chain(spec("s", 1, stage).build()),
                request(headers("deflate"), Body.of(utf8("not deflate"))));
        assertEquals(PlatformCodes.BODY_DECODING_FAILED, t.denial().orElseThrow().reasonCode());
    }

    /** Decoding, redacting and forwarding decoded gives the text with every key replaced and nothing else changed. */
    @Property(tries = 200)
    void gzipBodiesAreRedactedLikeTheirText(@ForAll @StringLength(max = 200) String before,
                                            @ForAll @StringLength(max = 200) String after) throws IOException {
        String text = before.replace("KEY", "") + "KEY" + after.replace("KEY", "");
        Decoding stage = new Decoding(true, ContentDecodingTest::redactKey);
        ChainResult r = engine.run(chain(spec("s", 1, stage).build()),
                request(headers("gzip"), Body.of(gzip(utf8(text)))));
        assertEquals(new String(utf8(text), StandardCharsets.UTF_8).replace("KEY", "[REDACTED]"),
                r.body().utf8().orElseThrow());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
