package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;

/**
 * The credential step (RFC 0009, "Operation phases and placement": "Credential injection", after the middleware chain
 * and route selection, before upstream forwarding): replaces placeholders with real secrets. The credentials work
 * fills it; until then {@link #identity()} is used.
 *
 * <p>It sees the headers the chain left (or, with no chain, the headers as received, names lowercased) and returns
 * the headers to forward. When it returns the very list it was given, the proxy forwards the original field lines
 * byte for byte; otherwise it writes the returned fields. Framing and hop-by-hop fields in the result are ignored and
 * rebuilt by the proxy; {@code Host} must not change. A {@link RuntimeException} fails the request with 502.
 */
@FunctionalInterface
public interface CredentialInjection {
    /**
     * @param request the admitted request
     * @param headers the headers about to be forwarded
     * @return the headers to forward; return {@code headers} itself when nothing changes
     */
    List<HttpHeader> inject(ProxyRequest request, List<HttpHeader> headers);

    /** {@return the step that changes nothing} */
    static CredentialInjection identity() {
        return (request, headers) -> headers;
    }
}
