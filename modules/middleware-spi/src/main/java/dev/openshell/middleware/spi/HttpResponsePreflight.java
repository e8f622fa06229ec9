package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import jakarta.json.JsonObject;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apiguardian.api.API;

/**
 * The final response head as one response stage sees it (operation {@link Operation#HTTP_RESPONSE}, phase
 * {@link Phase#PRE_RETURN}; wire {@code HttpResponsePreflight}).
 *
 * @param bindingId the stage's binding
 * @param context the request's context (its {@code requestId} correlates request and response evaluations)
 * @param target the admitted request target (canonical path, query as sent)
 * @param statusCode the final, non-informational upstream status, 200 to 999
 * @param headers the current end-to-end response headers after earlier stages' mutations, in wire order, names
 *     lowercase; credential, routing and hop-by-hop fields are omitted; {@code content-length},
 *     {@code content-encoding} and {@code content-range} are read-only. A response the supervisor decodes
 *     ({@code gzip}, {@code deflate}) is shown as it will be delivered: without {@code content-encoding} and
 *     {@code content-length}
 * @param config the stage's config from policy
 * @param maxPayloadBytes the effective limit, in bytes: the minimum of the platform (4 MiB), registration and
 *     binding limits. Bounds the whole body and its replacement in {@link HttpResponseBodyMode#WHOLE_BODY_BYTES}, and
 *     each replacement in {@link HttpResponseBodyMode#STREAM_BYTES}
 * @param permittedBodyModes the modes this stage may select, computed once from the original head; always holds
 *     {@link HttpResponseBodyMode#HEADERS_ONLY}. Selecting another mode is a stage failure ({@code on_error})
 * @param deferralPermitted whether the stage is {@code fail_closed}: only then may a streaming stage hold bytes of
 *     one unit back for a later replacement
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record HttpResponsePreflight(BindingId bindingId, RequestContext context, HttpRequestTarget target,
                                    int statusCode, List<HttpHeader> headers, JsonObject config,
                                    long maxPayloadBytes, Set<HttpResponseBodyMode> permittedBodyModes,
                                    boolean deferralPermitted) {
    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     * @throws IllegalArgumentException if the status is not final or HEADERS_ONLY is not permitted
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public HttpResponsePreflight {
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(config, "config");
        headers = List.copyOf(headers);
        permittedBodyModes = Set.copyOf(permittedBodyModes);
        if (statusCode < 200 || statusCode > 999) {
            throw new IllegalArgumentException("status " + statusCode + " is not a final status");
        }
        if (!permittedBodyModes.contains(HttpResponseBodyMode.HEADERS_ONLY)) {
            throw new IllegalArgumentException("HEADERS_ONLY is always permitted");
        }
    }

    /** {@return the binding, status and counts only: headers may hold personal data} */
    @Override
    public String toString() {
        return "HttpResponsePreflight[" + bindingId + ", " + statusCode + ", " + headers.size() + " headers, "
                + permittedBodyModes + "]";
    }
}
