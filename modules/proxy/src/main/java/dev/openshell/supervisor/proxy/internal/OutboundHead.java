package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HttpHeader;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The request head sent upstream: the original field lines byte for byte when nothing changed them, else rebuilt
 * from the header list with exactly one correct framing field (RFC 9112 section 6.2). Either way the {@code Host}
 * and framing fields are written in the canonical form the proxy decided on ({@link #hostValue}), and without
 * hop-by-hop fields ({@link HeaderTable#hopByHop}) and Connection-nominated ones (RFC 9110 section 7.6.1); a
 * WebSocket upgrade gets {@code Connection: Upgrade} and its {@code Upgrade} lines back.
 */
final class OutboundHead {
    /** How the request body goes upstream. */
    enum BodyMode {
        /** No body. */
        NONE,
        /** The buffered (possibly replaced) body, with one Content-Length. */
        BUFFERED,
        /** Streamed as received, length-delimited. */
        STREAM_LENGTH,
        /** Streamed as received, re-chunked. */
        STREAM_CHUNKED
    }

    private OutboundHead() {
    }

    private static boolean dropOnForward(String lower, Set<String> nominated) {
        return HeaderTable.hopByHop(lower) || nominated.contains(lower);
    }

    /**
     * The request as received, minus hop-by-hop and Connection-nominated fields, with the fields the proxy decided
     * on in their canonical spelling: {@code Host} as {@code host} (the normalised authority the policy admitted) and
     * one framing field for {@code original} ({@code Content-Length: <decimal>} or {@code Transfer-Encoding: chunked})
     * where the first framing field stood, whatever case, zero-padding or list form the client wrote.
     *
     * @param host the canonical Host value ({@link #hostValue})
     * @param original the framing the proxy read the body with, which the forwarded body keeps
     */
    static String raw(String requestLine, RequestHead head, Set<String> nominated, boolean websocket, String host,
                      BodyFraming original) {
        StringBuilder sb = new StringBuilder(sizeOf(requestLine, head.fields())).append(requestLine);
        boolean framed = false;
        for (HeaderField f : head.fields()) {
            String lower = f.lowerName();
            if (dropOnForward(lower, nominated)) {
                continue;
            }
            if (lower.equals("host")) {
                sb.append("Host: ").append(host).append("\r\n");
            } else if (!HeaderTable.framing(lower)) {
                sb.append(f.rawLine()).append("\r\n");
            } else if (!framed) {
                framed = true;
                switch (original.kind()) {
                    case LENGTH -> sb.append("Content-Length: ").append(original.length()).append("\r\n");
                    case CHUNKED -> sb.append("Transfer-Encoding: chunked\r\n");
                    case NONE, UNTIL_CLOSE -> { }
                }
            }
        }
        appendUpgrade(sb, head, websocket);
        return sb.append("\r\n").toString();
    }

    /**
     * {@return the Host value forwarded upstream: the normalised authority the policy admitted (lowercase host, no
     * trailing dot, IPv6 in brackets, RFC 5952), with {@code :port} when the received Host named a port or the port
     * is not the scheme's default} RFC 9112 section 3.2.2: a proxy forwarding an absolute-form target sends the
     * target's authority as Host.
     *
     * @param head the request head (its Host field, if any)
     * @param target the request-target as resolved
     */
    static String hostValue(RequestHead head, RequestReader.Target target) {
        Authority a = target.authority();
        int defaultPort = target.scheme().equals("https") ? 443 : 80;
        List<HeaderField> hosts = head.all("host");
        String received = hosts.isEmpty() ? "" : hosts.get(0).value();
        boolean explicitPort = received.lastIndexOf(':') > received.lastIndexOf(']');
        return explicitPort ? a.hostPort() : a.hostHeader(defaultPort);
    }

    /**
     * The request rebuilt from a header list: framing replaced by exactly one correct field.
     *
     * @throws Refusal 500 when a field the hook or credential step produced is not a token with a trimmed safe value
     */
    static String rebuilt(String requestLine, RequestHead head, List<HttpHeader> fields, Set<String> nominated,
                          boolean websocket, String host, BodyMode mode, int bufferedLength, BodyFraming original)
            throws Refusal {
        StringBuilder sb = new StringBuilder(sizeOf(requestLine, head.fields()) + 32).append(requestLine);
        // the hooks see lowercase names; a field the client sent keeps the client's spelling on the wire
        java.util.Map<String, String> spelling = new java.util.HashMap<>();
        for (HeaderField f : head.fields()) {
            spelling.putIfAbsent(f.lowerName(), f.name());
        }
        for (HttpHeader h : fields) {
            String lower = h.name().toLowerCase(Locale.ROOT);
            if (dropOnForward(lower, nominated) || HeaderTable.framing(lower)) {
                continue;
            }
            if (!HeadParser.isToken(h.name()) || !h.value().chars().allMatch(Syntax::isFieldValueChar)
                    || !h.value().equals(HeadParser.trimOws(h.value()))) {
                throw new Refusal(500, "internal_error", "the middleware hook produced an invalid header field");
            }
            if (lower.equals("host")) {
                sb.append("Host: ").append(host).append("\r\n"); // the chain cannot change it (Pipeline)
                continue;
            }
            String name = h.name().equals(lower) ? spelling.getOrDefault(lower, h.name()) : h.name();
            sb.append(name).append(": ").append(h.value()).append("\r\n");
        }
        switch (mode) {
            case BUFFERED -> {
                if (bufferedLength > 0 || original.kind() != BodyFraming.Kind.NONE) {
                    sb.append("Content-Length: ").append(bufferedLength).append("\r\n");
                }
            }
            case STREAM_LENGTH -> sb.append("Content-Length: ").append(original.length()).append("\r\n");
            case STREAM_CHUNKED -> sb.append("Transfer-Encoding: chunked\r\n");
            case NONE -> {
                if (original.kind() == BodyFraming.Kind.LENGTH) {
                    sb.append("Content-Length: 0\r\n");
                }
            }
        }
        appendUpgrade(sb, head, websocket);
        return sb.append("\r\n").toString();
    }

    private static void appendUpgrade(StringBuilder sb, RequestHead head, boolean websocket) {
        if (websocket) {
            sb.append("Connection: Upgrade\r\n");
            for (HeaderField f : head.all("upgrade")) {
                sb.append(f.rawLine()).append("\r\n");
            }
        }
    }

    /**
     * {@return room for a head of {@code first} and {@code fields}, each with its CRLF, and the empty line} A head
     * built in a builder of that size is never copied to grow it (a 1 KiB builder per head was most of what a GET
     * allocated).
     */
    static int sizeOf(String first, List<HeaderField> fields) {
        int n = first.length() + 2 + 24; // 24: a Connection or framing line the head may gain
        for (HeaderField f : fields) {
            n += f.rawLine().length() + 2;
        }
        return n;
    }

    /** Head text is ISO-8859-1 (one char per byte); a char above U+00FF can only come from the hook: UTF-8 then. */
    static byte[] encode(String s) {
        int n = s.length();
        int latin1 = 0;
        while (latin1 < n && s.charAt(latin1) <= 0xff) {
            latin1++;
        }
        if (latin1 == n) {
            return s.getBytes(StandardCharsets.ISO_8859_1); // one copy of the text's own bytes
        }
        ByteArrayOutputStream b = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c <= 0xff) {
                b.write(c);
            } else {
                int cp = s.codePointAt(i);
                b.writeBytes(new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8));
                i += Character.charCount(cp) - 1;
            }
        }
        return b.toByteArray();
    }
}
