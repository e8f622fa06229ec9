package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.List;

/**
 * The checks a WebSocket client makes of the server's {@code 101 Switching Protocols} (RFC 6455 section 4.1, "the
 * client MUST _Fail the WebSocket Connection_"), made by the proxy, which is the upstream's WebSocket client: a
 * {@code 101} that does not complete the handshake the request opened is never relayed (the client gets 502
 * {@code invalid_upstream_response} with the reason this class gives), since the proxy would otherwise start a
 * session it cannot frame.
 *
 * <p>A {@code 101} completes the handshake when it is HTTP/1.1, its {@code Upgrade} is exactly {@code websocket} (any
 * case), its {@code Connection} lists {@code upgrade}, it has exactly one {@code Sec-WebSocket-Accept} equal to the
 * base64 SHA-1 of the request's {@code Sec-WebSocket-Key} and the RFC's GUID, and any {@code Sec-WebSocket-Protocol}
 * it names is one the request offered. (A {@code Sec-WebSocket-Extensions} the request did not offer is checked by the
 * relay.)
 */
final class UpgradeHandshake {
    /** RFC 6455 section 1.3: the GUID appended to the key. */
    static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    private UpgradeHandshake() {
    }

    /**
     * {@return {@code null} when {@code response} completes the WebSocket handshake {@code request} opened, else why
     * not, safe to show (no field value is quoted)}
     *
     * @param request the client's upgrade request head (its {@code Sec-WebSocket-Key} and offered protocols)
     * @param response the upstream's {@code 101} head
     */
    static String problem(RequestHead request, ResponseHead response) {
        if (response.isHttp10()) {
            return "the upstream's 101 is HTTP/1.0; the WebSocket handshake requires HTTP/1.1 (RFC 6455 section 4.1,"
                    + " RFC 9110 section 15.2)";
        }
        if (!response.listElements("upgrade").equals(List.of("websocket"))) {
            return "the upstream switched to another protocol than the WebSocket the request asked for"
                    + " (Upgrade is not websocket; RFC 6455 section 4.1)";
        }
        if (!response.listElements("connection").contains("upgrade")) {
            return "the upstream's 101 lacks Connection: upgrade (RFC 6455 section 4.1)";
        }
        List<HeaderField> keys = request.all("sec-websocket-key");
        List<HeaderField> accepts = response.all("sec-websocket-accept");
        if (keys.size() != 1 || accepts.size() != 1
                || !accepts.get(0).value().trim().equals(accept(keys.get(0).value().trim()))) {
            return "the upstream's 101 has no Sec-WebSocket-Accept matching the request's key (RFC 6455 section 4.1)";
        }
        List<String> chosen = response.listElements("sec-websocket-protocol");
        if (chosen.size() > 1 || (chosen.size() == 1
                && !request.listElements("sec-websocket-protocol").contains(chosen.get(0)))) {
            return "the upstream chose a WebSocket subprotocol the request did not offer (RFC 6455 section 4.1)";
        }
        return null;
    }

    /**
     * {@return the {@code Sec-WebSocket-Accept} value for {@code key}: base64 of the SHA-1 of the key and the GUID}
     *
     * @param key the request's {@code Sec-WebSocket-Key}, trimmed
     */
    static String accept(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-1")
                    .digest((key + GUID).getBytes(StandardCharsets.ISO_8859_1));
            return Base64.getEncoder().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is a required JDK algorithm", e);
        }
    }
}
