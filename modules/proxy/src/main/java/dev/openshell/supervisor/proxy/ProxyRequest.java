package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/**
 * One admitted request as the policy steps see it ({@link PolicySteps}): parsed, framed and past L4
 * and SSRF admission.
 *
 * @param requestId the proxy's ID for this request, unique per process
 * @param target the admitted target: scheme ({@code http}, or {@code https} inside an intercepted CONNECT), the
 *     normalised host and port from the request-target or CONNECT authority, the method, path and raw query
 * @param headers every field line as received, in wire order with duplicates: names lowercased, values trimmed;
 *     this includes credential-bearing, routing, framing and hop-by-hop fields (the hook filters before handing them
 *     to any stage)
 * @param connectionNominated the lowercase field names listed in the request's {@code Connection} fields (RFC 9110
 *     section 7.6.1), which never reach the upstream
 * @param endpoint the facts of the endpoint that admitted the destination
 * @param contentLength the declared Content-Length in bytes, when the body is length-delimited
 * @param chunked whether the body uses the chunked transfer coding
 * @param websocketUpgrade whether this is a WebSocket upgrade request ({@code Upgrade: websocket} nominated by
 *     {@code Connection}); after a 101 the frames are relayed without inspection
 * @param client the client connection the request arrived on (inside a CONNECT tunnel: the tunnel's connection),
 *     with its per-connection attachment (the process identity)
 */
public record ProxyRequest(String requestId, HttpRequestTarget target, List<HttpHeader> headers,
                           Set<String> connectionNominated, EndpointFacts endpoint, OptionalLong contentLength,
                           boolean chunked, boolean websocketUpgrade, ClientConnection client) {
    /**
     * Checks the parts.
     *
     * @throws NullPointerException if any part is {@code null}
     */
    public ProxyRequest {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(target, "target");
        headers = List.copyOf(headers);
        connectionNominated = Set.copyOf(connectionNominated);
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(contentLength, "contentLength");
        Objects.requireNonNull(client, "client");
    }

    /**
     * A request on a connection the proxy cannot describe ({@link ClientConnection#unknown()}): tests and tools.
     *
     * @param requestId the request ID
     * @param target the target
     * @param headers the headers
     * @param connectionNominated the {@code Connection}-nominated names
     * @param endpoint the admitting endpoint's facts
     * @param contentLength the Content-Length, if any
     * @param chunked whether chunked
     * @param websocketUpgrade whether a WebSocket upgrade
     */
    public ProxyRequest(String requestId, HttpRequestTarget target, List<HttpHeader> headers,
                        Set<String> connectionNominated, EndpointFacts endpoint, OptionalLong contentLength, boolean chunked,
                        boolean websocketUpgrade) {
        this(requestId, target, headers, connectionNominated, endpoint, contentLength, chunked,
                websocketUpgrade, ClientConnection.unknown());
    }

    /** {@return whether the request has a body: chunked, or a Content-Length above 0} */
    public boolean hasBody() {
        return chunked || contentLength.orElse(0) > 0;
    }

    /** {@return a summary without header values, query or body} */
    @Override
    public String toString() {
        return "ProxyRequest[" + requestId + ", " + target + ", " + headers.size() + " headers, policy "
                + endpoint.policyName() + "]";
    }
}
