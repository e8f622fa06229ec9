package dev.openshell.supervisor.proxy.internal;

/**
 * A message broke an HTTP/1.1 framing or syntax rule (RFC 9112). The proxy answers with {@link #status()} and a JSON
 * body carrying {@link #code()} and {@link #getMessage()}, then closes the connection.
 *
 * <p>The message is a fixed description of the rule that was broken; it never quotes request content.
 */
public final class FramingException extends Exception {
    private static final long serialVersionUID = 1L;
    private final int status;
    private final String code;

    /**
     * @param status the HTTP status to answer with (400, 413, 414, 431, 501 or 505)
     * @param code a short stable code, {@code [a-z_]+}
     * @param message a safe description of the broken rule, with its RFC section
     */
    public FramingException(int status, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
    }

    /** {@return a 400 Bad Request} @param code the code @param message the safe description */
    public static FramingException badRequest(String code, String message) {
        return new FramingException(400, code, message);
    }

    /** {@return the HTTP status to answer with} */
    public int status() {
        return status;
    }

    /** {@return the short stable code} */
    public String code() {
        return code;
    }
}
