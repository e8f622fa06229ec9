package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.RequestContext;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The request representation a chain folds over (RFC 0009, "The middleware contract": "a chain is effectively a fold
 * over a single request representation"): the admitted target, the complete header list in wire order as parsed, and
 * the buffered body.
 *
 * <p>{@code headers} is the complete list, protected lines included: the engine hands each stage only the visible
 * subset ({@link HeaderRules#visible}) and applies accepted mutations to the complete list, which the proxy forwards.
 * Names are lowercased on construction. The proxy strips {@code x-openshell-middleware-*} lines sent by the sandbox
 * ({@link HeaderRules#stripMiddlewareNamespace}) before building this.
 *
 * @param target the admitted request target; never changed by stages
 * @param headers every header line, in wire order, duplicates kept; names must be tokens; unmodifiable copy
 * @param body the buffered body (at most {@link dev.openshell.middleware.spi.EnvelopeLimits#MAX_BODY_BYTES})
 * @param context the audit context handed to every stage
 */
public record ChainRequest(HttpRequestTarget target, List<HttpHeader> headers, Body body, RequestContext context) {
    /**
     * Lowercases header names and copies the list.
     *
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if a header name is not a token or a value is not safe
     *     ({@link HeaderRules#isSafeValue})
     */
    public ChainRequest {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(context, "context");
        List<HttpHeader> copy = new ArrayList<>(headers.size());
        for (int i = 0; i < headers.size(); i++) {
            HttpHeader h = Objects.requireNonNull(headers.get(i), "header");
            if (!dev.openshell.middleware.spi.internal.Syntax.isToken(h.name())) {
                throw new IllegalArgumentException("header line " + (i + 1) + ": the name is not a token");
            }
            if (!HeaderRules.isSafeValue(h.value())) {
                throw new IllegalArgumentException("header line " + (i + 1) + " (" + HeaderRules.asciiLower(h.name())
                        + "): the value holds a control character");
            }
            String lower = HeaderRules.asciiLower(h.name());
            copy.add(lower.equals(h.name()) ? h : new HttpHeader(lower, h.value()));
        }
        headers = Collections.unmodifiableList(copy);
    }

    /** {@return the Connection-nominated names of this request, lowercased and sorted} */
    public Set<String> connectionNominated() {
        return HeaderRules.connectionNominated(headers);
    }

    /**
     * {@return a copy with other headers and body, the same target and context}
     *
     * @param headers the headers
     * @param body the body
     */
    public ChainRequest with(List<HttpHeader> headers, Body body) {
        return new ChainRequest(target, headers, body, context);
    }

    /** {@return the target, header count and body size only} */
    @Override
    public String toString() {
        return "ChainRequest[" + target + ", " + headers.size() + " headers, " + body + "]";
    }
}
