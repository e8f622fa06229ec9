package dev.openshell.supervisor.proxy.internal;

import java.nio.charset.StandardCharsets;

/**
 * Client-visible error responses: a small JSON body {@code {"error":"<code>","detail":"<text>"}} built only from the
 * proxy's own codes and fixed texts (and the policy steps' answers), never from request content.
 */
public final class ErrorResponses {
    private ErrorResponses() {
    }

    /**
     * {@return the complete response bytes of a policy step's answer}
     *
     * @param a the answer
     * @param close whether to add {@code Connection: close}
     */
    public static byte[] response(dev.openshell.supervisor.proxy.Answer a, boolean close) {
        return response(a.status(), a.error(), a.detail(), a.extra(), close);
    }

    /**
     * {@return a complete error response without extra members}
     *
     * @param status the status
     * @param error the code
     * @param detail the safe detail
     * @param close whether to add {@code Connection: close}
     */
    public static byte[] response(int status, String error, String detail, boolean close) {
        return response(status, error, detail, java.util.Map.of(), close);
    }

    /**
     * {@return the complete response bytes, with further string members after {@code error} and {@code detail}}
     *
     * @param status the status code
     * @param error the error code
     * @param detail the safe detail
     * @param extra further platform-owned members, in order
     * @param close whether to add {@code Connection: close}
     */
    public static byte[] response(int status, String error, String detail, java.util.Map<String, String> extra,
                                  boolean close) {
        return response(status, error, detail, extra, "", close);
    }

    /**
     * {@return the complete response bytes with further header lines}
     *
     * @param status the status code
     * @param error the error code
     * @param detail the safe detail
     * @param extra further platform-owned members, in order
     * @param headerLines further platform-owned header lines, each ending in CRLF
     * @param close whether to add {@code Connection: close}
     */
    public static byte[] response(int status, String error, String detail, java.util.Map<String, String> extra,
                                  String headerLines, boolean close) {
        StringBuilder json = new StringBuilder(json(error, detail));
        json.setLength(json.length() - 1);
        extra.forEach((k, v) -> json.append(',').append(quote(k)).append(':').append(quote(v)));
        byte[] body = json.append('}').toString().getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + " " + reason(status) + "\r\n"
                + "Content-Type: application/json\r\n"
                + "Cache-Control: no-store\r\n"
                + "Content-Length: " + body.length + "\r\n"
                + headerLines
                + (close ? "Connection: close\r\n" : "")
                + "\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[h.length + body.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(body, 0, all, h.length, body.length);
        return all;
    }

    /** {@return the JSON error body} @param error the code @param detail the detail */
    public static String json(String error, String detail) {
        return "{\"error\":" + quote(error) + ",\"detail\":" + quote(detail) + "}";
    }

    /** {@return {@code s} as a JSON string literal, controls escaped, at most 512 characters kept} @param s text */
    public static String quote(String s) {
        String t = s.length() > 512 ? s.substring(0, 512) : s;
        StringBuilder b = new StringBuilder(t.length() + 2).append('"');
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x7f || (c >= 0xd800 && c <= 0xdfff)) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** {@return the reason phrase for a status} @param status the status */
    public static String reason(int status) {
        return switch (status) {
            case 400 -> "Bad Request";
            case 401 -> "Unauthorized";
            case 403 -> "Forbidden";
            case 404 -> "Not Found";
            case 405 -> "Method Not Allowed";
            case 408 -> "Request Timeout";
            case 413 -> "Content Too Large";
            case 414 -> "URI Too Long";
            case 417 -> "Expectation Failed";
            case 422 -> "Unprocessable Content";
            case 429 -> "Too Many Requests";
            case 431 -> "Request Header Fields Too Large";
            case 451 -> "Unavailable For Legal Reasons";
            case 500 -> "Internal Server Error";
            case 501 -> "Not Implemented";
            case 502 -> "Bad Gateway";
            case 503 -> "Service Unavailable";
            case 504 -> "Gateway Timeout";
            case 505 -> "HTTP Version Not Supported";
            default -> status < 500 ? "Client Error" : "Server Error";
        };
    }
}
