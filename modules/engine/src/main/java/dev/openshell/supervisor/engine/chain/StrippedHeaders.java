package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Objects;

/**
 * The result of {@link HeaderRules#stripMiddlewareNamespace}: the sandbox's request headers without any
 * {@code x-openshell-middleware-*} line.
 *
 * @param headers the headers to use from now on; the input list itself when nothing was stripped
 * @param stripped how many lines were removed (never their names or values: report the count only)
 */
public record StrippedHeaders(List<HttpHeader> headers, int stripped) {
    /** @throws NullPointerException if {@code headers} is {@code null} */
    public StrippedHeaders {
        Objects.requireNonNull(headers, "headers");
        if (stripped < 0) {
            throw new IllegalArgumentException("stripped count " + stripped + " is negative");
        }
    }

    /** {@return whether the sandbox sent at least one {@code x-openshell-middleware-*} line} */
    public boolean spoofed() {
        return stripped > 0;
    }
}
