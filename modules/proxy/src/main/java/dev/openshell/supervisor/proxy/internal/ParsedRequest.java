package dev.openshell.supervisor.proxy.internal;

import java.util.Set;

/**
 * A request head read and checked by {@link RequestReader}: everything the exchange needs before admission.
 *
 * @param head the parsed head
 * @param target the request-target, resolved against the tunnel when inside one
 * @param framing the body framing (RFC 9112 section 6)
 * @param nominated the lowercase field names the {@code Connection} fields nominate
 * @param expectContinue whether the client waits for {@code 100 Continue}
 * @param clientClose whether the client asked to close after this exchange (or is HTTP/1.0)
 * @param websocket whether this is a WebSocket upgrade request
 */
record ParsedRequest(RequestHead head, RequestReader.Target target, BodyFraming framing, Set<String> nominated,
                     boolean expectContinue, boolean clientClose, boolean websocket) {
    /** {@return the request's method and destination, for debug logs} @param status the answer */
    String describe(int status) {
        return head.method() + " " + target.scheme() + "://" + target.authority().hostPort() + " -> " + status;
    }
}
