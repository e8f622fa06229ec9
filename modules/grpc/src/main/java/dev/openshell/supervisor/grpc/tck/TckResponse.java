package dev.openshell.supervisor.grpc.tck;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import dev.openshell.middleware.spi.HttpResponseBodyResult;
import dev.openshell.middleware.spi.HttpResponseBodyUnit;
import dev.openshell.middleware.spi.HttpResponsePreflight;
import dev.openshell.middleware.spi.HttpResponsePreflightDecision;
import dev.openshell.middleware.spi.HttpResponseStage;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import jakarta.json.JsonObject;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The conformance checks of a response binding ({@code HTTP_RESPONSE/PRE_RETURN}, {@code HttpResponsePreReturn}),
 * made through the supervisor's own adapter:
 * <ul>
 *   <li>{@code response.preflight_modes}: with only {@code HEADERS_ONLY} permitted (a {@code 204}), the preflight
 *       answers skip, block or inspect {@code HEADERS_ONLY}; with every mode permitted, it answers a permitted
 *       mode;</li>
 *   <li>{@code response.body_units}: the selected body mode's units (one whole body with {@code end_of_stream}, or
 *       two streamed units, the second an empty {@code end_of_stream} unit) are each answered with exactly their
 *       sequence, and replacements stay within {@code max_payload_bytes}.</li>
 * </ul>
 */
final class TckResponse {
    private static final HttpRequestTarget TARGET = new HttpRequestTarget("https", "tck.example", 443, "GET",
            "/page", "");

    private TckResponse() {
    }

    static List<Check> run(MiddlewareProvider provider, BindingId binding, JsonObject config, long limit) {
        List<Check> checks = new ArrayList<>();
        long max = Math.max(1024, Math.min(limit, 1 << 20));
        Set<HttpResponseBodyMode> all = EnumSet.allOf(HttpResponseBodyMode.class);
        try {
            HttpResponseStage bodyless = provider.openResponse(binding);
            HttpResponsePreflightDecision d = bodyless.preflight(preflight(binding, config, 204, max,
                    EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY)));
            bodyless.end(SessionEndReason.NORMAL);
            if (d.action() == HttpResponsePreflightDecision.Action.INSPECT
                    && d.bodyMode() != HttpResponseBodyMode.HEADERS_ONLY) {
                checks.add(Check.of("response.preflight_modes", Check.Status.FAIL, "a 204 permits HEADERS_ONLY only, "
                        + "but the service selected " + d.bodyMode() + " (the supervisor fails the stage)"));
                return checks;
            }
            HttpResponseStage page = provider.openResponse(binding);
            HttpResponsePreflightDecision full = page.preflight(preflight(binding, config, 200, max, all));
            checks.add(Check.of("response.preflight_modes", Check.Status.PASS, "preflights answer within the "
                    + "permitted modes", "204: " + d.action() + ", 200: " + full.action() + " " + full.bodyMode()));
            if (full.action() != HttpResponsePreflightDecision.Action.INSPECT
                    || full.bodyMode() == HttpResponseBodyMode.HEADERS_ONLY) {
                page.end(SessionEndReason.NORMAL);
                checks.add(Check.of("response.body_units", Check.Status.SKIP, "the service reads no body of a plain "
                        + "200 page"));
                return checks;
            }
            checks.add(units(page, full.bodyMode(), max));
            page.end(SessionEndReason.NORMAL);
        } catch (RuntimeException e) {
            checks.add(Check.of("response.stream", Check.Status.FAIL, "the response stream failed: "
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": "
                    + e.getMessage().lines().findFirst().orElse(""))));
        }
        return checks;
    }

    private static Check units(HttpResponseStage page, HttpResponseBodyMode mode, long max) {
        Body text = Body.ofUtf8("{\"page\":\"a conformance page\"}");
        List<HttpResponseBodyUnit> units = mode == HttpResponseBodyMode.WHOLE_BODY_BYTES
                ? List.of(new HttpResponseBodyUnit(1, text, true))
                : List.of(new HttpResponseBodyUnit(1, text, false), new HttpResponseBodyUnit(2, Body.empty(), true));
        for (HttpResponseBodyUnit u : units) {
            HttpResponseBodyResult r = page.body(u);
            if (r.sequence() != u.sequence()) {
                return Check.of("response.body_units", Check.Status.FAIL, "unit " + u.sequence()
                        + " was answered with sequence " + r.sequence() + " (the supervisor fails the stage)");
            }
            if (r.replacement().filter(b -> b.size() > max).isPresent()) {
                return Check.of("response.body_units", Check.Status.FAIL, "a replacement exceeds max_payload_bytes "
                        + max);
            }
        }
        return Check.of("response.body_units", Check.Status.PASS, "every unit answered with its own sequence, "
                + "replacements within the limit", units.size() + " unit(s) in " + mode);
    }

    private static HttpResponsePreflight preflight(BindingId binding, JsonObject config, int status, long max,
                                                   Set<HttpResponseBodyMode> modes) {
        return new HttpResponsePreflight(binding, RequestContext.of("tck-response"), TARGET, status,
                List.of(new HttpHeader("content-type", "application/json")), config, max, modes, true);
    }
}
