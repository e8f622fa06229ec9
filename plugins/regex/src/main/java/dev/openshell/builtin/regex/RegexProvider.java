package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.WebSocketSession;
import jakarta.json.JsonObject;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.StringJoiner;

/**
 * The {@code openshell/regex} built-in (binding {@value #BINDING_ID}, {@code HTTP_REQUEST/PRE_CREDENTIALS}, bodies up
 * to 4 MiB; and {@code WEBSOCKET_MESSAGE} in both directions, {@link MessageScan}).
 *
 * <p>For each request it reads the body as its upstream will ({@link BodyDecoder}: the charset it declares, or for
 * JSON the one its byte order mark shows, and UTF-16 or UTF-32 content also as its bytes are, {@link TwoReadings};
 * JSON string escapes, form percent-encoding, each multipart part by its own headers) and looks for the secret
 * formats of the {@link Catalog} and the operator patterns the config selects ({@link RegexConfig}) in that text
 * ({@link SecretScanner}), so token boundaries are judged on the decoded text. With no match it allows without
 * touching the body. With matches:
 * <ul>
 *   <li>{@code mode: redact}: allows with the body rewritten, each match replaced by {@code [REDACTED:<id>]} written
 *       back in the body's own encoding (JSON-escaped, percent-encoded, transcoded, re-encoded base64 part), every
 *       other byte kept, so a valid JSON or form body stays valid;</li>
 *   <li>{@code mode: deny}: denies with reason code {@value #DENY_CODE} and the kinds found in the reason.</li>
 * </ul>
 * Either way it reports one finding per kind found ({@code secret.<id>}, the kind's label, the count, severity
 * {@code high}) and metadata {@code matches} (the total count) and {@code action} ({@code redacted} or
 * {@code denied}). Matched values never appear in any result field. A redacted body read in two ways is decoded and
 * scanned again; one that still shows a secret or no longer decodes fails with {@value #REDACTION_INCOMPLETE_CODE}.
 *
 * <p>A body it cannot read is a failure of this stage, so the stage's {@code on_error} decides, never a silent pass:
 * {@value #NOT_UTF8_CODE} for text read as UTF-8 that is not well-formed (binary, for example), {@value #UNDECODABLE_CODE}
 * for everything else it cannot decode (an unsupported charset or content coding, a body declared as JSON that is not
 * JSON, a malformed multipart body or part). The empty body is allowed.
 * Thread-safe; the only state is the last parsed config, kept by identity (a stage passes the same config object
 * with every request).
 */
public final class RegexProvider implements MiddlewareProvider {
    /** The binding ID. */
    public static final String BINDING_ID = "openshell/regex";
    /** Reason code of a deny. */
    public static final String DENY_CODE = "secret_detected";
    /** Failure code for a body read as UTF-8 (declared, or by default) that is not well-formed UTF-8. */
    public static final String NOT_UTF8_CODE = Undecodable.NOT_UTF8;
    /**
     * Failure code for any other body the stage cannot read as its upstream would: a charset outside UTF-8, UTF-16,
     * UTF-32 and the ASCII-compatible single-byte ones, a {@code Content-Encoding} nobody decoded, a body declared as
     * JSON that is not JSON, a malformed multipart body or part.
     */
    public static final String UNDECODABLE_CODE = Undecodable.UNDECODABLE;
    /**
     * Failure code for a redaction whose result, decoded and scanned again, still shows a secret in one of its
     * readings or no longer decodes (a UTF-16 body whose ASCII-byte reading held a key, for example).
     */
    public static final String REDACTION_INCOMPLETE_CODE = "redaction_incomplete";
    /** Failure code for an invalid config reaching evaluation (policy validation should have refused it). */
    public static final String INVALID_CONFIG_CODE = "invalid_config";
    /** Failure code for a redacted body that would exceed the 4 MiB platform maximum. */
    public static final String REDACTED_TOO_LARGE_CODE = "redacted_body_over_capacity";

    /** The response binding ID ({@code HTTP_RESPONSE/PRE_RETURN}; {@link RegexResponseStage}). */
    public static final String RESPONSE_BINDING_ID = "openshell/regex-response";

    private static final BindingId ID = new BindingId(BINDING_ID);
    private static final BindingId RESPONSE_ID = new BindingId(RESPONSE_BINDING_ID);
    private static final MiddlewareManifest MANIFEST = new MiddlewareManifest("openshell-regex", "1",
            List.of(MiddlewareBinding.httpRequest(BINDING_ID, EnvelopeLimits.MAX_BODY_BYTES)
                    .decoding(MiddlewareBinding.GZIP, MiddlewareBinding.DEFLATE)
                    .skippingEmptyBody(), // the empty body is allowed, unchanged: nothing to scan
                    new MiddlewareBinding(ID, Operation.WEBSOCKET_MESSAGE, Phase.PRE_CREDENTIALS,
                            EnvelopeLimits.MAX_BODY_BYTES, Optional.empty()),
                    new MiddlewareBinding(ID, Operation.WEBSOCKET_MESSAGE, Phase.PRE_RETURN,
                            EnvelopeLimits.MAX_BODY_BYTES, Optional.empty()),
                    MiddlewareBinding.httpResponse(RESPONSE_BINDING_ID, EnvelopeLimits.MAX_BODY_BYTES)));

    /** The last config parsed, by identity: a stage's config object is the same for every request. */
    private volatile Parsed last;

    private record Parsed(JsonObject json, RegexConfig config) {
    }

    /** The last {@code Content-Type} value read, with its reading: a client sends the same value every time. */
    private final ContentTypes contentTypes = new ContentTypes();

    /** Creates the provider; called by {@link java.util.ServiceLoader}. */
    public RegexProvider() {
    }

    @Override
    public MiddlewareManifest manifest() {
        return MANIFEST;
    }

    @Override
    public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
        if (!ID.equals(bindingId) && !RESPONSE_ID.equals(bindingId)) {
            return ConfigValidation.invalid("openshell/regex does not serve binding '" + bindingId + "'");
        }
        if (ID.equals(bindingId) && config.containsKey(RegexConfig.UNINSPECTABLE)) {
            return ConfigValidation.invalid(
                    "openshell/regex: 'uninspectable' applies to openshell/regex-response only");
        }
        try {
            RegexConfig c = RegexConfig.parse(config);
            last = new Parsed(config, c);
            return ConfigValidation.ok();
        } catch (RegexConfig.Invalid e) {
            return ConfigValidation.invalid(e.getMessage());
        }
    }

    /**
     * Opens the response stage ({@value #RESPONSE_BINDING_ID}): {@link RegexResponseStage}.
     *
     * @throws MiddlewareException for another binding
     */
    @Override
    public dev.openshell.middleware.spi.HttpResponseStage openResponse(BindingId bindingId) {
        if (!RESPONSE_ID.equals(bindingId)) {
            throw new MiddlewareException("unknown_binding", "openshell/regex has no response binding '"
                    + bindingId + "'");
        }
        return new RegexResponseStage(this);
    }

    /** {@return the parsed config} @param json the config from policy */
    RegexConfig config(JsonObject json) {
        Parsed p = last;
        if (p != null && p.json() == json) {
            return p.config();
        }
        try {
            RegexConfig c = RegexConfig.parse(json);
            last = new Parsed(json, c);
            return c;
        } catch (RegexConfig.Invalid e) {
            throw new MiddlewareException(INVALID_CONFIG_CODE, e.getMessage());
        }
    }

    /**
     * {@return a stream that scans one WebSocket session's text messages in one direction ({@link MessageScan})}
     *
     * @param bindingId {@value #BINDING_ID}
     * @param phase either direction
     */
    @Override
    public WebSocketSession openWebSocketSession(BindingId bindingId, Phase phase) {
        if (!ID.equals(bindingId)) {
            throw new MiddlewareException(INVALID_CONFIG_CODE, "openshell/regex does not serve '" + bindingId + "'");
        }
        return new MessageScan(p -> config(p.config()));
    }

    @Override
    public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
        return evaluate(evaluation, true);
    }

    /**
     * {@return the result for a body, or for a unit of a streamed response body}
     *
     * @param evaluation the body and its headers
     * @param whole whether the body is read whole: also for the charsets it declares in itself; a streamed
     *     response's unit is not ({@link RegexResponseStage} reads every unit for them once, as part of the stream)
     */
    HttpRequestResult evaluate(HttpRequestEvaluation evaluation, boolean whole) {
        RegexConfig config = config(evaluation.config());
        Body body = evaluation.body();
        if (body.isEmpty()) {
            return HttpRequestResult.allow();
        }
        ByteBuffer bytes = body.asReadOnlyBuffer();
        TextView view;
        try {
            view = whole ? BodyDecoder.decode(evaluation.headers(), bytes, contentTypes)
                    : BodyDecoder.decodeWindow(evaluation.headers(), bytes, contentTypes);
        } catch (Undecodable e) {
            throw new MiddlewareException(e.code(), e.getMessage());
        }
        boolean redact = config.mode() == RegexConfig.Mode.REDACT;
        Scan scan = SecretScanner.scan(view.text(), config.selection(), redact);
        if (scan.isEmpty()) {
            return HttpRequestResult.allow();
        }
        HttpRequestResult.Builder result;
        if (redact) {
            byte[] redacted = Edit.apply(bytes, view.toInput(scan.edits())); // each walk checks the interrupt
            if (redacted.length > EnvelopeLimits.MAX_BODY_BYTES) {
                throw new MiddlewareException(REDACTED_TOO_LARGE_CODE,
                        "redacted body would exceed the 4 MiB platform maximum");
            }
            if (view.twoReadings()) {
                verify(evaluation.headers(), redacted, config.selection(), whole);
            }
            result = HttpRequestResult.builder(Decision.ALLOW).body(Body.ofOwned(redacted))
                    .metadata("action", "redacted");
        } else {
            result = HttpRequestResult.builder(Decision.DENY).reason(denyReason(scan)).reasonCode(DENY_CODE)
                    .metadata("action", "denied");
        }
        findings(scan).forEach(result::finding);
        return result.metadata("matches", Integer.toString(scan.total())).build();
    }

    /**
     * Decodes and scans a redacted body with two readings ({@link TwoReadings}: UTF-16 or UTF-32 content) again, as
     * the original was: a redaction that left a secret readable in either reading, or a body that no longer decodes,
     * fails the stage with {@value #REDACTION_INCOMPLETE_CODE}, so its {@code on_error} decides and nothing unread
     * is forwarded.
     */
    static void verify(List<dev.openshell.middleware.spi.HttpHeader> headers, byte[] redacted,
            Selection selection, boolean whole) {
        boolean clean;
        try {
            ByteBuffer b = ByteBuffer.wrap(redacted).asReadOnlyBuffer();
            TextView again = whole ? BodyDecoder.decode(headers, b) : BodyDecoder.decodeWindow(headers, b);
            clean = SecretScanner.scan(again.text(), selection, false).isEmpty();
        } catch (Undecodable e) {
            clean = false;
        }
        if (!clean) {
            throw new MiddlewareException(REDACTION_INCOMPLETE_CODE,
                    "redacted body still holds a secret or no longer decodes in one of its readings");
        }
    }

    /** The most secret types a deny reason names; the rest are counted. */
    static final int REASON_TYPES = 16;

    private static String denyReason(Scan scan) {
        StringJoiner kinds = new StringJoiner(", ", "request body contains secrets: ", "");
        int named = 0;
        int more = 0;
        for (String id : scan.byId().keySet()) {
            if (named++ < REASON_TYPES) {
                kinds.add(id);
            } else {
                more++;
            }
        }
        return more == 0 ? kinds.toString() : kinds + " and " + more + " more";
    }

    /**
     * {@return one finding per secret type found, in type order: {@code secret.<id>}, the label, the count, severity
     * {@code high}, confidence {@code high} when the format has a checksum and every match passed it (else empty)}
     * A result carries at most {@link EnvelopeLimits#MAX_FINDINGS} findings: past that, the last one is
     * {@value #OTHER_TYPE}, counting the matches of every type not listed.
     */
    static List<Finding> findings(Scan scan) {
        Selection s = scan.selection();
        int kinds = scan.kindCount();
        int listed = kinds <= EnvelopeLimits.MAX_FINDINGS ? kinds : EnvelopeLimits.MAX_FINDINGS - 1;
        List<Finding> out = new ArrayList<>(Math.min(kinds, EnvelopeLimits.MAX_FINDINGS));
        long rest = 0;
        for (int k = 0; k < kinds; k++) {
            int t = scan.type(k);
            if (k < listed) {
                String confidence = s.checksummed(t) && scan.unverified(k) == 0 ? "high" : "";
                out.add(new Finding("secret." + s.id(t), s.label(t), scan.count(k), confidence, "high"));
            } else {
                rest += scan.count(k);
            }
        }
        if (rest > 0) {
            out.add(new Finding(OTHER_TYPE, "Other secret formats", rest, "", "high"));
        }
        return out;
    }

    /** The finding type that counts the types past the findings limit. */
    public static final String OTHER_TYPE = "secret.other";
}
