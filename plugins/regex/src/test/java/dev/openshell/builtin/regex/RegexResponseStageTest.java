package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import dev.openshell.middleware.spi.HttpResponseBodyResult;
import dev.openshell.middleware.spi.HttpResponseBodyUnit;
import dev.openshell.middleware.spi.HttpResponsePreflight;
import dev.openshell.middleware.spi.HttpResponsePreflightDecision;
import dev.openshell.middleware.spi.HttpResponseStage;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code openshell/regex-response}: uninspectable bodies at preflight, secrets split across streamed units. */
class RegexResponseStageTest {
    static final BindingId RESPONSE = new BindingId(RegexProvider.RESPONSE_BINDING_ID);
    static final String KEY = "sk-proj-Q7x9Lm2Pz4Rt8Vb1Nc6Kd3Hs5Jw0YeUa";
    static final Set<HttpResponseBodyMode> HEADERS_ONLY = EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY);
    static final Set<HttpResponseBodyMode> STREAM = EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY,
            HttpResponseBodyMode.STREAM_BYTES);
    static final List<HttpHeader> SSE = List.of(new HttpHeader("content-type", "text/event-stream"));
    static final List<HttpHeader> PLAIN = List.of(new HttpHeader("content-type", "text/plain; charset=utf-8"));

    private final RegexProvider provider = new RegexProvider();

    static JsonObject config(String mode, String uninspectable) {
        var b = Json.createObjectBuilder().add("mode", mode);
        if (uninspectable != null) {
            b.add("uninspectable", uninspectable);
        }
        return b.build();
    }

    static HttpResponsePreflight preflight(JsonObject config, String method, int status, List<HttpHeader> headers,
                                           Set<HttpResponseBodyMode> modes, boolean deferral) {
        return new HttpResponsePreflight(RESPONSE, RequestContext.of("r"),
                new HttpRequestTarget("https", "api.test", 443, method, "/", ""), status, headers, config,
                EnvelopeLimitsHolder.MAX, modes, deferral);
    }

    /** The platform limit, as the engine passes it. */
    static final class EnvelopeLimitsHolder {
        static final long MAX = dev.openshell.middleware.spi.EnvelopeLimits.MAX_BODY_BYTES;
    }

    /** The heads an upstream can send to make a body unreadable, as the stage sees them (HEADERS_ONLY only). */
    static List<List<HttpHeader>> uninspectableHeads() {
        List<List<HttpHeader>> out = new ArrayList<>();
        for (String coding : List.of("br", "zstd", "x-anything", "gzip;q=1", "chunked", "gzip, gzip")) {
            out.add(List.of(new HttpHeader("content-type", "text/plain"), new HttpHeader("content-encoding", coding),
                    new HttpHeader("content-length", "57")));
        }
        out.add(List.of(new HttpHeader("content-type", "text/plain"), new HttpHeader("cache-control",
                "no-transform")));
        out.add(List.of(new HttpHeader("content-type", "text/plain"), new HttpHeader("content-range",
                "bytes 0-56/57")));
        out.add(List.of(new HttpHeader("content-type", "multipart/byteranges; boundary=x")));
        return out;
    }

    @ParameterizedTest
    @MethodSource("uninspectableHeads")
    void aBodyTheStageMayNotReadIsBlockedByDefaultInBothModes(List<HttpHeader> head) {
        for (String mode : List.of("deny", "redact")) {
            for (int status : new int[] {200, 206}) {
                HttpResponseStage stage = provider.openResponse(RESPONSE);
                HttpResponsePreflightDecision d = stage.preflight(preflight(config(mode, null), "GET", status, head,
                        HEADERS_ONLY, true));
                assertEquals(HttpResponsePreflightDecision.Action.BLOCK_DELIVERY, d.action(), mode + " " + status);
                assertEquals("response_uninspectable", d.reasonCode().orElseThrow());
                assertEquals(RegexResponseStage.UNINSPECTABLE_TYPE, d.findings().getFirst().type());
                assertEquals("high", d.findings().getFirst().severity());
                // explicit block is the default
                HttpResponsePreflightDecision explicit = provider.openResponse(RESPONSE).preflight(preflight(
                        config(mode, "block"), "GET", status, head, HEADERS_ONLY, false));
                assertEquals(HttpResponsePreflightDecision.Action.BLOCK_DELIVERY, explicit.action());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("uninspectableHeads")
    void uninspectableAllowLetsItThroughWithAMediumFinding(List<HttpHeader> head) {
        for (String mode : List.of("deny", "redact")) {
            HttpResponsePreflightDecision d = provider.openResponse(RESPONSE).preflight(preflight(
                    config(mode, "allow"), "GET", 200, head, HEADERS_ONLY, true));
            assertEquals(HttpResponsePreflightDecision.Action.SKIP, d.action());
            assertEquals(1, d.findings().size());
            assertEquals(RegexResponseStage.UNINSPECTABLE_TYPE, d.findings().getFirst().type());
            assertEquals("medium", d.findings().getFirst().severity());
        }
    }

    @Test
    void aResponseWithoutABodyIsSkippedWithoutAFinding() {
        JsonObject deny = config("deny", null);
        List<HttpHeader> br = List.of(new HttpHeader("content-encoding", "br"));
        for (HttpResponsePreflight p : List.of(
                preflight(deny, "HEAD", 200, br, HEADERS_ONLY, true),
                preflight(deny, "GET", 204, List.of(), HEADERS_ONLY, true),
                preflight(deny, "GET", 304, List.of(new HttpHeader("etag", "\"x\"")), HEADERS_ONLY, true),
                preflight(deny, "GET", 200, List.of(new HttpHeader("content-encoding", "br"),
                        new HttpHeader("content-length", "0")), HEADERS_ONLY, true))) {
            HttpResponsePreflightDecision d = provider.openResponse(RESPONSE).preflight(p);
            assertEquals(HttpResponsePreflightDecision.Action.SKIP, d.action(), p.toString());
            assertTrue(d.findings().isEmpty());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"drop\"", "1", "true"})
    void uninspectableTakesBlockOrAllowAndOnlyOnTheResponseBinding(String value) {
        JsonObject bad = Json.createReader(new java.io.StringReader("{\"uninspectable\":" + value + "}"))
                .readObject();
        assertFalse(provider.validateConfig(RESPONSE, bad).valid());
        ConfigValidation onRequest = provider.validateConfig(new BindingId(RegexProvider.BINDING_ID),
                config("deny", "allow"));
        assertFalse(onRequest.valid());
        assertTrue(provider.validateConfig(RESPONSE, config("deny", "allow")).valid());
    }

    /** Runs units through a stage; {@return the delivered bytes} (each result checked against its unit). */
    static byte[] run(HttpResponseStage stage, List<byte[]> units) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int i = 0; i < units.size(); i++) {
            HttpResponseBodyUnit u = new HttpResponseBodyUnit(i + 1, Body.of(units.get(i)), i == units.size() - 1);
            HttpResponseBodyResult r = stage.body(u);
            assertEquals(i + 1, r.sequence());
            out.writeBytes(r.replacement().orElse(u.data()).toByteArray());
        }
        return out.toByteArray();
    }

    static List<byte[]> split(byte[] body, int... at) {
        List<byte[]> out = new ArrayList<>();
        int from = 0;
        for (int a : at) {
            out.add(java.util.Arrays.copyOfRange(body, from, a));
            from = a;
        }
        out.add(java.util.Arrays.copyOfRange(body, from, body.length));
        out.add(new byte[0]); // the end discovered after the last data
        return out;
    }

    HttpResponseStage streaming(String mode, List<HttpHeader> headers) {
        HttpResponseStage stage = provider.openResponse(RESPONSE);
        assertEquals(HttpResponseBodyMode.STREAM_BYTES, stage.preflight(preflight(config(mode, null), "GET", 200,
                headers, STREAM, true)).bodyMode());
        return stage;
    }

    byte[] wholeRedaction(List<HttpHeader> headers, byte[] body) {
        return provider.evaluate(new HttpRequestEvaluation(RESPONSE, Phase.PRE_CREDENTIALS, RequestContext.of("r"),
                config("redact", null), new HttpRequestTarget("https", "api.test", 443, "GET", "/", ""), headers,
                Body.of(body))).body().map(Body::toByteArray).orElse(body);
    }

    static byte[] sseBody(String filler) {
        return ("data: hello\n\n: comment\r\ndata: " + filler + " " + KEY + " tail\r\n\r\ndata: end\n\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    static byte[] plainBody(int before, int after) {
        return ("é".repeat(before / 2) + " " + KEY + " " + "ü".repeat(after / 2)).getBytes(StandardCharsets.UTF_8);
    }

    /** Splits {@code body} at every byte boundary and checks deny fails and redact equals the whole redaction. */
    void everySplitIsCaught(List<HttpHeader> headers, byte[] body) {
        byte[] expected = wholeRedaction(headers, body);
        assertFalse(new String(expected, StandardCharsets.UTF_8).contains(KEY));
        for (int at = 1; at < body.length; at++) {
            List<byte[]> units = split(body, at);
            MiddlewareException e = assertThrows(MiddlewareException.class,
                    () -> run(streaming("deny", headers), units), "split at " + at);
            assertEquals(RegexProvider.DENY_CODE, e.code());
            assertArrayEquals(expected, run(streaming("redact", headers), units), "split at " + at);
        }
    }

    @Test
    void aKeySplitAtAnyByteOfAnEventStreamIsCaught() {
        everySplitIsCaught(SSE, sseBody("x"));
    }

    @Test
    void aKeySplitAtAnyByteOfAPlainStreamIsCaughtAlsoPastTheHeldTail() {
        everySplitIsCaught(PLAIN, plainBody(20, 20));
        byte[] big = plainBody(StreamHold.TAIL + 3000, StreamHold.TAIL + 100);
        int key = new String(big, StandardCharsets.UTF_8).indexOf(KEY);
        int keyAt = ("é".repeat((StreamHold.TAIL + 3000) / 2) + " ").getBytes(StandardCharsets.UTF_8).length;
        assertTrue(key > 0);
        byte[] expected = wholeRedaction(PLAIN, big);
        for (int at = keyAt - 2; at <= keyAt + KEY.length() + 2; at++) {
            final int a = at;
            assertThrows(MiddlewareException.class, () -> run(streaming("deny", PLAIN), split(big, a)));
            assertArrayEquals(expected, run(streaming("redact", PLAIN), split(big, a)), "split at " + at);
        }
    }

    @Test
    void aMatchAcrossTheHeldTailsEdgeIsHeldWhole() {
        String filler = "word ".repeat(400);
        byte[] body = (filler + KEY + " " + "z".repeat(StreamHold.TAIL + 10)).getBytes(StandardCharsets.US_ASCII);
        byte[] expected = wholeRedaction(PLAIN, body);
        for (int k = 1; k < KEY.length(); k++) {
            int at = filler.length() + k + StreamHold.TAIL; // the first unit's tail starts inside the key
            assertThrows(MiddlewareException.class, () -> run(streaming("deny", PLAIN), split(body, at)));
            assertArrayEquals(expected, run(streaming("redact", PLAIN), split(body, at)), "k " + k);
        }
    }

    @Test
    void aCleanStreamSplitInsideCharactersIsDeliveredUnchanged() {
        byte[] body = ("€".repeat(StreamHold.TAIL) + "\n").getBytes(StandardCharsets.UTF_8);
        for (int at : new int[] {1, 2, StreamHold.TAIL + 1, body.length - 2}) {
            assertArrayEquals(body, run(streaming("deny", PLAIN), split(body, at, Math.min(body.length, at + 5000))));
        }
    }

    @Test
    void anEventLongerThanTheHoldBoundFailsTheStage() {
        HttpResponseStage stage = provider.openResponse(RESPONSE);
        stage.preflight(new HttpResponsePreflight(RESPONSE, RequestContext.of("r"),
                new HttpRequestTarget("https", "api.test", 443, "GET", "/", ""), 200, SSE, config("redact", null),
                64 * 1024, STREAM, true));
        byte[] unit = ("data: " + "a".repeat(16 * 1024)).getBytes(StandardCharsets.UTF_8);
        stage.body(new HttpResponseBodyUnit(1, Body.of(unit), false));
        MiddlewareException e = assertThrows(MiddlewareException.class, () -> {
            for (int i = 2; i < 5; i++) {
                stage.body(new HttpResponseBodyUnit(i, Body.of(unit), false));
            }
        });
        assertEquals(RegexResponseStage.HOLD_OVER_CAPACITY_CODE, e.code());
    }

    @Test
    void withoutDeferralEachUnitIsScannedOnItsOwnAndPassedThrough() {
        HttpResponseStage stage = provider.openResponse(RESPONSE);
        stage.preflight(preflight(config("redact", null), "GET", 200, SSE, STREAM, false));
        HttpResponseBodyResult r = stage.body(new HttpResponseBodyUnit(1, Body.ofUtf8("data: x\n\n"), false));
        assertTrue(r.replacement().isEmpty());
    }

    static final Set<HttpResponseBodyMode> ALL = EnumSet.allOf(HttpResponseBodyMode.class);

    @Test
    void aKeyInAResponseHeaderBlocksInDenyModeAndIsRedactedInRedactMode() {
        List<HttpHeader> head = List.of(new HttpHeader("content-type", "text/plain"),
                new HttpHeader("x-leak", "a " + KEY), new HttpHeader("link", "<https://x.test/>"),
                new HttpHeader("x-leak", "clean"), new HttpHeader("etag", "\"" + KEY + "\""));
        HttpResponsePreflightDecision deny = provider.openResponse(RESPONSE).preflight(preflight(config("deny", null),
                "GET", 200, head, ALL, true));
        assertEquals(HttpResponsePreflightDecision.Action.BLOCK_DELIVERY, deny.action());
        assertEquals(RegexProvider.DENY_CODE, deny.reasonCode().orElseThrow());
        assertEquals(2, deny.findings().getFirst().count());
        HttpResponsePreflightDecision redact = provider.openResponse(RESPONSE).preflight(preflight(
                config("redact", null), "GET", 200, head, ALL, true));
        assertEquals(HttpResponsePreflightDecision.Action.INSPECT, redact.action());
        assertEquals(HttpResponseBodyMode.WHOLE_BODY_BYTES, redact.bodyMode());
        assertEquals(List.of(dev.openshell.middleware.spi.HeaderMutation.remove("x-leak"),
                dev.openshell.middleware.spi.HeaderMutation.write("x-leak", "a [REDACTED:openai_api_key]",
                        dev.openshell.middleware.spi.ExistingHeaderAction.APPEND),
                dev.openshell.middleware.spi.HeaderMutation.write("x-leak", "clean",
                        dev.openshell.middleware.spi.ExistingHeaderAction.APPEND),
                dev.openshell.middleware.spi.HeaderMutation.remove("etag")), redact.headerMutations());
        assertFalse(redact.findings().isEmpty());
        for (var m : redact.headerMutations()) {
            assertFalse(m.toString().contains(KEY));
        }
    }

    /** A key in an encoded response-header parameter (RFC 2231 in UTF-16LE, continuations, RFC 2047). */
    @Test
    void aKeyInAnEncodedHeaderParameterIsFoundAndItsLineRemoved() {
        StringBuilder pct = new StringBuilder();
        for (byte x : KEY.getBytes(java.nio.charset.StandardCharsets.UTF_16LE)) {
            pct.append(String.format("%%%02X", x & 0xff));
        }
        for (String v : List.of("attachment; filename*=UTF-16LE''" + pct,
                "attachment; filename*0=\"" + KEY.substring(0, 9) + "\"; filename*1=\"" + KEY.substring(9) + "\"",
                "attachment; filename=\"=?utf-8?B?" + java.util.Base64.getEncoder().encodeToString(
                        KEY.getBytes(java.nio.charset.StandardCharsets.UTF_8)) + "?=\"")) {
            List<HttpHeader> head = List.of(new HttpHeader("content-disposition", v), new HttpHeader("x-a", "b"));
            HttpResponsePreflightDecision deny = provider.openResponse(RESPONSE).preflight(preflight(
                    config("deny", null), "GET", 200, head, ALL, true));
            assertEquals(HttpResponsePreflightDecision.Action.BLOCK_DELIVERY, deny.action(), v);
            HttpResponsePreflightDecision redact = provider.openResponse(RESPONSE).preflight(preflight(
                    config("redact", null), "GET", 200, head, ALL, true));
            assertEquals(List.of(dev.openshell.middleware.spi.HeaderMutation.remove("content-disposition")),
                    redact.headerMutations(), v);
        }
    }

    /**
     * A response-header parameter or encoded word in a charset that cannot be decoded (attacker pass 7, P9-4 / P9-6:
     * UTF-7 and unicode_escape, which Python's urllib and email decode) fails the stage (body_undecodable: on_error
     * decides), in either mode; one in a charset the runtime decodes is scanned.
     */
    @Test
    void aHeaderParameterInACharsetThatCannotBeDecodedFailsTheStage() {
        for (String v : List.of("attachment; filename*=UTF-7''+AHMAaw-", "attachment; filename*=unicode_escape''x",
                "=?UTF-7?B?K0FITUFhdy0=?=", "attachment; filename=\"=?raw-unicode-escape?Q?x?=\"")) {
            for (String mode : List.of("deny", "redact")) {
                List<HttpHeader> head = List.of(new HttpHeader("content-disposition", v));
                MiddlewareException e = assertThrows(MiddlewareException.class, () -> provider.openResponse(RESPONSE)
                        .preflight(preflight(config(mode, null), "GET", 200, head, ALL, true)), v);
                assertEquals(RegexProvider.UNDECODABLE_CODE, e.code(), v);
            }
        }
        HttpResponsePreflightDecision sjis = provider.openResponse(RESPONSE).preflight(preflight(config("deny", null),
                "GET", 200, List.of(new HttpHeader("content-disposition", "attachment; filename*=Shift_JIS''%82%A0")),
                ALL, true));
        assertEquals(HttpResponsePreflightDecision.Action.INSPECT, sjis.action());
    }

    @Test
    void aKeyInAFieldStagesMayNotRewriteBlocksAndACleanHeadChangesNothing() {
        List<HttpHeader> head = List.of(new HttpHeader("content-range", "bytes 0-1/2 " + KEY));
        HttpResponsePreflightDecision d = provider.openResponse(RESPONSE).preflight(preflight(config("redact", null),
                "GET", 200, head, ALL, true));
        assertEquals(HttpResponsePreflightDecision.Action.BLOCK_DELIVERY, d.action());
        HttpResponsePreflightDecision clean = provider.openResponse(RESPONSE).preflight(preflight(
                config("redact", null), "GET", 204, List.of(new HttpHeader("x-a", "b")), HEADERS_ONLY, true));
        assertEquals(HttpResponsePreflightDecision.Action.SKIP, clean.action());
        HttpResponsePreflightDecision bodyless = provider.openResponse(RESPONSE).preflight(preflight(
                config("redact", null), "HEAD", 200, List.of(new HttpHeader("x-k", KEY)), HEADERS_ONLY, true));
        assertEquals(HttpResponsePreflightDecision.Action.INSPECT, bodyless.action());
        assertEquals(HttpResponseBodyMode.HEADERS_ONLY, bodyless.bodyMode());
        assertEquals(2, bodyless.headerMutations().size());
    }

    @Test
    void moreRewritesThanADecisionMayCarryBlock() {
        List<HttpHeader> many = java.util.stream.IntStream.range(0, dev.openshell.middleware.spi.EnvelopeLimits
                .MAX_HEADER_MUTATIONS).mapToObj(i -> new HttpHeader("x-k", KEY)).toList();
        HttpResponsePreflightDecision count = provider.openResponse(RESPONSE).preflight(preflight(
                config("redact", null), "GET", 200, many, ALL, true));
        assertEquals(HttpResponsePreflightDecision.Action.BLOCK_DELIVERY, count.action(), "65 mutations");
        List<HttpHeader> large = List.of(new HttpHeader("x-k", KEY + " " + "v".repeat(
                dev.openshell.middleware.spi.EnvelopeLimits.MAX_HEADER_MUTATION_BYTES)));
        HttpResponsePreflightDecision bytes = provider.openResponse(RESPONSE).preflight(preflight(
                config("redact", null), "GET", 200, large, ALL, true));
        assertEquals(HttpResponsePreflightDecision.Action.BLOCK_DELIVERY, bytes.action(), "over 32 KiB rewritten");
        List<HttpHeader> fits = List.of(new HttpHeader("x-k", KEY + " " + "v".repeat(1000)));
        assertEquals(HttpResponsePreflightDecision.Action.INSPECT, provider.openResponse(RESPONSE).preflight(preflight(
                config("redact", null), "GET", 200, fits, ALL, true)).action());
    }

    /**
     * A streamed body is read for the charsets it declares once, as a stream: a UTF-7 signature where a unit (not
     * the body) starts declares nothing; where the body starts it does.
     */
    @Test
    void aSignatureWhereAUnitStartsIsNoDeclaration() {
        byte[] body = "abc +/v8 def".getBytes(StandardCharsets.US_ASCII);
        for (boolean deferral : new boolean[] {false, true}) {
            HttpResponseStage stage = provider.openResponse(RESPONSE);
            stage.preflight(preflight(config("redact", null), "GET", 200, PLAIN, STREAM, deferral));
            assertArrayEquals(body, run(stage, split(body, 4)), "deferral " + deferral);
        }
        byte[] signed = "+/v8 abc".getBytes(StandardCharsets.US_ASCII);
        HttpResponseStage stage = provider.openResponse(RESPONSE);
        stage.preflight(preflight(config("redact", null), "GET", 200, PLAIN, STREAM, false));
        assertEquals("body_undecodable", assertThrows(MiddlewareException.class,
                () -> run(stage, split(signed, 2))).code());
    }

    /**
     * Attacker pass 10, P12-1: a {@code <meta>} declaring UTF-7 whose tag straddles two units of a streamed body (no
     * unit holds it whole) fails the stream as undecodable, with and without deferral; split anywhere else, the body
     * passes.
     */
    @Test
    void aDeclarationSplitAcrossUnitsIsReadWhole() {
        byte[] body = ("<html>" + "x".repeat(20_000) + "<meta http-equiv=a content=\"text/html; charset=utf-7\">"
                + DeclaredInBodyTest.utf7(KEY)).getBytes(StandardCharsets.US_ASCII);
        int tag = 6 + 20_000;
        List<HttpHeader> html = List.of(new HttpHeader("content-type", "text/html"));
        for (boolean deferral : new boolean[] {false, true}) {
            for (int cut : new int[] {tag + 3, tag + 40, tag + 48}) {
                HttpResponseStage stage = provider.openResponse(RESPONSE);
                stage.preflight(preflight(config("redact", null), "GET", 200, html, STREAM, deferral));
                MiddlewareException e = assertThrows(MiddlewareException.class,
                        () -> run(stage, split(body, tag - 2, cut)), "cut at " + cut);
                assertEquals("body_undecodable", e.code());
            }
        }
        byte[] readable = new String(body, StandardCharsets.US_ASCII).replace("utf-7", "utf-8")
                .getBytes(StandardCharsets.US_ASCII);
        HttpResponseStage stage = provider.openResponse(RESPONSE);
        stage.preflight(preflight(config("redact", null), "GET", 200, html, STREAM, false));
        assertEquals(readable.length, run(stage, split(readable, tag - 2, tag + 40)).length, "read as before");
    }
}
