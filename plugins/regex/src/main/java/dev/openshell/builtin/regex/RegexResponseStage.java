package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import dev.openshell.middleware.spi.HttpResponseBodyResult;
import dev.openshell.middleware.spi.HttpResponseBodyUnit;
import dev.openshell.middleware.spi.HttpResponsePreflight;
import dev.openshell.middleware.spi.HttpResponsePreflightDecision;
import dev.openshell.middleware.spi.HttpResponseStage;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.internal.BodyCharsets;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code openshell/regex-response} on one response ({@code HTTP_RESPONSE/PRE_RETURN}): the request binding's scan
 * applied to what comes back, with the same config ({@code mode}, {@code secrets}, {@code patterns}) and one key of
 * its own ({@code uninspectable}).
 *
 * <ul>
 *   <li>Preflight, head: the header values are scanned ({@link HeaderScan}); a match blocks the delivery in
 *       {@code mode: deny} and is redacted by head mutations in {@code mode: redact}.</li>
 *   <li>Preflight, body: {@code WHOLE_BODY_BYTES} when permitted (the body is scanned as one text, as a request body is);
 *       else {@code STREAM_BYTES} when permitted; else, for a response without a body ({@code HEAD}, 204, 304,
 *       {@code Content-Length: 0}), skip; else (a body it may not read: partial, {@code no-transform}, a coding the
 *       supervisor does not decode) {@code block_delivery} with {@value #UNINSPECTABLE_CODE} and a High finding
 *       {@value #UNINSPECTABLE_TYPE}, or with {@code uninspectable: allow} skip with a Medium one.</li>
 *   <li>{@code STREAM_BYTES} with deferral permitted ({@code fail_closed}): bytes are held back across units
 *       ({@link StreamHold}): an event stream is scanned one complete event at a time, any other body with a tail of
 *       at least {@value StreamHold#TAIL} bytes held, so a secret split across upstream writes is scanned whole.
 *       The held bytes are bounded by half the stage's limit (the contract's bound on deferred bytes); past it the
 *       stage fails with {@value #HOLD_OVER_CAPACITY_CODE}. Without deferral ({@code fail_open}) each unit is
 *       scanned on its own.</li>
 *   <li>{@code mode: redact}: the emitted bytes with matches are replaced by their redaction
 *       ({@code [REDACTED:<id>]}), with one finding per kind.</li>
 *   <li>{@code mode: deny}: a match fails the stage with {@value RegexProvider#DENY_CODE} (the contract has no
 *       per-unit denial): under {@code fail_closed} a whole body is answered with a platform error and no upstream
 *       byte, a streamed one is cut off.</li>
 * </ul>
 * A body it cannot read fails the stage as for requests. Used by one thread at a time.
 */
final class RegexResponseStage implements HttpResponseStage {
    /** Reason code of a blocked response whose body the stage may not read. */
    static final String UNINSPECTABLE_CODE = "response_uninspectable";
    /** Finding type of a response whose body the stage may not read (blocked or, when allowed, let through). */
    static final String UNINSPECTABLE_TYPE = "regex.response_uninspectable";
    /** Failure code when the bytes held back in a stream exceed their bound (an event longer than it, say). */
    static final String HOLD_OVER_CAPACITY_CODE = "response_hold_over_capacity";

    private final RegexProvider provider;
    private HttpResponsePreflight preflight;
    private boolean hold;
    private boolean events;
    private long holdLimit;
    private byte[] held = new byte[0];
    /** The charsets a streamed body declares in itself, read across its units (a tag may straddle two); P12-1. */
    private BodyCharsets.Reader declarations;

    RegexResponseStage(RegexProvider provider) {
        this.provider = provider;
    }

    @Override
    public HttpResponsePreflightDecision preflight(HttpResponsePreflight p) {
        RegexConfig config = provider.config(p.config()); // an invalid config fails here
        this.preflight = p;
        HeaderScan.Outcome head = HeaderScan.scan(p.headers(), config);
        if (head.block()) {
            return HttpResponsePreflightDecision.blockDelivery(RegexProvider.DENY_CODE,
                    head.findings().toArray(Finding[]::new));
        }
        HttpResponsePreflightDecision body = bodyDecision(p, config);
        if (head.findings().isEmpty()) {
            return body;
        }
        List<Finding> findings = new ArrayList<>(body.findings());
        findings.addAll(head.findings());
        if (findings.size() > EnvelopeLimits.MAX_FINDINGS) {
            findings = findings.subList(0, EnvelopeLimits.MAX_FINDINGS);
        }
        if (body.action() == HttpResponsePreflightDecision.Action.BLOCK_DELIVERY) {
            return new HttpResponsePreflightDecision(body.action(), body.bodyMode(), List.of(), "",
                    body.reasonCode(), findings, Map.of());
        }
        HttpResponseBodyMode mode = body.action() == HttpResponsePreflightDecision.Action.INSPECT ? body.bodyMode()
                : HttpResponseBodyMode.HEADERS_ONLY;
        return new HttpResponsePreflightDecision(HttpResponsePreflightDecision.Action.INSPECT, mode,
                head.mutations(), "", Optional.empty(), findings, Map.of("header_action", "redacted"));
    }

    /** {@return the decision on the body alone} */
    private HttpResponsePreflightDecision bodyDecision(HttpResponsePreflight p, RegexConfig config) {
        Set<HttpResponseBodyMode> modes = p.permittedBodyModes();
        if (modes.contains(HttpResponseBodyMode.WHOLE_BODY_BYTES)) {
            return HttpResponsePreflightDecision.inspect(HttpResponseBodyMode.WHOLE_BODY_BYTES);
        }
        if (modes.contains(HttpResponseBodyMode.STREAM_BYTES)) {
            hold = p.deferralPermitted();
            events = eventStream(p.headers());
            holdLimit = p.maxPayloadBytes() / 2;
            declarations = BodyCharsets.reader();
            return HttpResponsePreflightDecision.inspect(HttpResponseBodyMode.STREAM_BYTES);
        }
        if (bodyless(p)) {
            return HttpResponsePreflightDecision.skip();
        }
        if (config.allowUninspectable()) {
            return HttpResponsePreflightDecision.skip().withFindings(List.of(new Finding(UNINSPECTABLE_TYPE,
                    "Response body let through unscanned (uninspectable: allow)", 1, "", "medium")));
        }
        return HttpResponsePreflightDecision.blockDelivery(UNINSPECTABLE_CODE, new Finding(UNINSPECTABLE_TYPE,
                "Response body the secret scan may not read (partial, no-transform or an undecoded coding)", 1, "",
                "high"));
    }

    /** {@return whether the response has no body: a response to HEAD, a 204, a 304, or Content-Length 0} */
    private static boolean bodyless(HttpResponsePreflight p) {
        if (p.target().method().equals("HEAD") || p.statusCode() == 204 || p.statusCode() == 304) {
            return true;
        }
        List<HttpHeader> lengths = p.headers().stream().filter(h -> h.name().equals("content-length")).toList();
        return !lengths.isEmpty() && lengths.stream().allMatch(h -> h.value().strip().equals("0"))
                && p.headers().stream().noneMatch(h -> h.name().equals("transfer-encoding"));
    }

    private static boolean eventStream(List<HttpHeader> headers) {
        for (HttpHeader h : headers) {
            if (h.name().equals("content-type")) {
                MediaType t = MediaType.parse(h.value());
                return t != null && t.type().equals("text") && t.subtype().equals("event-stream");
            }
        }
        return false;
    }

    @Override
    public HttpResponseBodyResult body(HttpResponseBodyUnit unit) {
        readDeclarations(unit);
        if (!hold) {
            return scan(unit.sequence(), unit.data(), false);
        }
        byte[] data = unit.data().toByteArray();
        byte[] buf = held.length == 0 ? data : concat(held, data);
        RegexConfig config = provider.config(preflight.config());
        int cut = unit.endOfStream() ? buf.length
                : events ? StreamHold.events(buf) : StreamHold.tail(preflight.headers(), buf,
                        config.selection(), (int) Math.min(StreamHold.TAIL, holdLimit));
        byte[] rest = Arrays.copyOfRange(buf, cut, buf.length);
        if (rest.length > holdLimit) {
            throw new MiddlewareException(HOLD_OVER_CAPACITY_CODE, "the response stream held more than "
                    + holdLimit + " bytes without " + (events ? "a complete event" : "a place to cut"));
        }
        boolean same = held.length == 0 && cut == buf.length;
        held = rest;
        return scan(unit.sequence(), same ? unit.data() : Body.ofOwned(Arrays.copyOf(buf, cut)), !same);
    }

    /**
     * {@return the result for one unit whose emitted bytes are {@code emit}}
     *
     * @param changed whether {@code emit} differs from the unit's bytes (a replacement even without a match)
     */
    private HttpResponseBodyResult scan(long sequence, Body emit, boolean changed) {
        if (emit.isEmpty()) {
            return changed ? HttpResponseBodyResult.transform(sequence, emit)
                    : HttpResponseBodyResult.passThrough(sequence);
        }
        HttpRequestResult r = provider.evaluate(new HttpRequestEvaluation(preflight.bindingId(),
                Phase.PRE_CREDENTIALS, preflight.context(), preflight.config(), preflight.target(),
                preflight.headers(), emit), declarations == null); // a streamed unit: read by readDeclarations
        if (r.decision() == Decision.DENY) {
            throw new MiddlewareException(RegexProvider.DENY_CODE, "response body contains secrets");
        }
        Optional<Body> replacement = r.body().isPresent() ? r.body() : changed ? Optional.of(emit) : Optional.empty();
        return new HttpResponseBodyResult(sequence, replacement, "", Optional.empty(), r.findings(),
                r.body().isPresent() ? r.metadata() : Map.of());
    }

    /**
     * Reads the unit's bytes for a charset the body declares in itself, wherever it starts in the stream: the one
     * reading of a streamed body's declarations (a unit is scanned without one of its own; a signature counts only
     * where the body starts, not where a unit does).
     *
     * @throws MiddlewareException ({@link RegexProvider#UNDECODABLE_CODE}) when it declares one the scan cannot read
     */
    private void readDeclarations(HttpResponseBodyUnit unit) {
        if (declarations == null) {
            return;
        }
        List<BodyCharsets.Declaration> found = new ArrayList<>(0);
        for (ByteBuffer segment : unit.data().segments()) {
            found.addAll(declarations.read(segment, 0, segment.limit()));
        }
        if (unit.endOfStream()) {
            found.addAll(declarations.end());
        }
        try {
            BodyDecoder.checkDeclared(found, false); // a JSON response too: Scrapy and node-fetch read a <meta> in it
        } catch (Undecodable e) {
            throw new MiddlewareException(e.code(), e.getMessage());
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
