package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Decision;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code openshell/regex-response} on one response ({@code HTTP_RESPONSE/PRE_RETURN}): the request binding's scan
 * applied to what comes back, with the same config ({@code mode}, {@code secrets}, {@code patterns}).
 *
 * <ul>
 *   <li>Preflight: {@code WHOLE_BODY_BYTES} when permitted (the body is scanned as one text, as a request body is);
 *       else {@code STREAM_BYTES} when permitted (each unit scanned on its own: a secret split across two upstream
 *       flushes is not seen); else skip (bodyless, partial, {@code no-transform} or an undecodable coding).</li>
 *   <li>{@code mode: redact}: each unit with matches is replaced by its redaction ({@code [REDACTED:<id>]}), with one
 *       finding per kind.</li>
 *   <li>{@code mode: deny}: a unit with a match fails the stage with {@value RegexProvider#DENY_CODE} (the contract
 *       has no per-unit denial): under {@code fail_closed} a whole body is answered with a platform error and no
 *       upstream byte, a streamed one is cut off.</li>
 * </ul>
 * A body it cannot read fails the stage as for requests. Used by one thread at a time.
 */
final class RegexResponseStage implements HttpResponseStage {
    private final RegexProvider provider;
    private HttpResponsePreflight preflight;

    RegexResponseStage(RegexProvider provider) {
        this.provider = provider;
    }

    @Override
    public HttpResponsePreflightDecision preflight(HttpResponsePreflight p) {
        provider.config(p.config()); // an invalid config fails here
        this.preflight = p;
        if (p.permittedBodyModes().contains(HttpResponseBodyMode.WHOLE_BODY_BYTES)) {
            return HttpResponsePreflightDecision.inspect(HttpResponseBodyMode.WHOLE_BODY_BYTES);
        }
        if (p.permittedBodyModes().contains(HttpResponseBodyMode.STREAM_BYTES)) {
            return HttpResponsePreflightDecision.inspect(HttpResponseBodyMode.STREAM_BYTES);
        }
        return HttpResponsePreflightDecision.skip();
    }

    @Override
    public HttpResponseBodyResult body(HttpResponseBodyUnit unit) {
        if (unit.data().isEmpty()) {
            return HttpResponseBodyResult.passThrough(unit.sequence());
        }
        List<HttpHeader> headers = preflight.headers();
        HttpRequestResult r = provider.evaluate(new HttpRequestEvaluation(preflight.bindingId(), Phase.PRE_CREDENTIALS,
                preflight.context(), preflight.config(), preflight.target(), headers, unit.data()));
        if (r.decision() == Decision.DENY) {
            throw new MiddlewareException(RegexProvider.DENY_CODE, "response body contains secrets");
        }
        Optional<Body> replacement = r.body();
        return new HttpResponseBodyResult(unit.sequence(), replacement, "", Optional.empty(), r.findings(),
                replacement.isPresent() ? r.metadata() : Map.of());
    }
}
