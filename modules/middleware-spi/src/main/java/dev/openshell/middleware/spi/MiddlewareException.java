package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import java.util.Objects;
import org.apiguardian.api.API;

/**
 * A stage failed to produce a result (RFC 0009, "Terminology": Failure policy). The host treats it like every other
 * stage failure: the stage's {@code on_error} decides between deny ({@code fail_closed}) and bypass
 * ({@code fail_open}).
 *
 * <p>The message must be safe to log: never include request content, matched values or secrets. The {@code code}
 * is a short platform-style code {@code [a-z][a-z0-9_]*}.
 */
@API(status = STABLE, since = "0.1")
public class MiddlewareException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final String code;

    /**
     * @param code a short code such as {@code body_not_utf8}
     * @param message a safe message
     */
    @API(status = STABLE, since = "0.1")
    public MiddlewareException(String code, String message) {
        super(message);
        this.code = Objects.requireNonNull(code, "code");
    }

    /**
     * @param code a short code
     * @param message a safe message
     * @param cause the cause; its message is not shown to clients
     */
    @API(status = STABLE, since = "0.1")
    public MiddlewareException(String code, String message, Throwable cause) {
        super(message, cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    /** {@return the short code} */
    public String code() {
        return code;
    }
}
