package dev.openshell.supervisor.proxy;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A platform answer a policy step gives the client instead of forwarding: {@code status} with the JSON body
 * {@code {"error": error, "detail": detail, ...extra}} ({@code docs/proxy.md}, "Error responses").
 *
 * @param status a 4xx or 5xx status
 * @param error a short stable code, for example {@code middleware_denied}
 * @param detail a short safe explanation; it must not quote request content, matched values or secrets
 * @param extra further platform-owned string members, in order, for example {@code config_key}, {@code binding_id},
 *     {@code reason_code}; never request content
 * @param close whether the answer carries {@code Connection: close} and the proxy closes the connection after it (an
 *     L7 policy denial does: {@code docs/policy-reference.md}, "L7 policy", decision 5)
 */
public record Answer(int status, String error, String detail, Map<String, String> extra, boolean close) {
    /**
     * Checks the parts.
     *
     * @throws IllegalArgumentException if {@code status} is not 400..599
     * @throws NullPointerException if a string is {@code null}
     */
    public Answer {
        if (status < 400 || status > 599) {
            throw new IllegalArgumentException("answer status " + status + " is outside 400..599");
        }
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(detail, "detail");
        extra = Collections.unmodifiableMap(new LinkedHashMap<>(extra));
    }

    /**
     * An answer that keeps the connection open.
     *
     * @param status a 4xx or 5xx status
     * @param error the code
     * @param detail the safe explanation
     * @param extra further platform-owned members
     */
    public Answer(int status, String error, String detail, Map<String, String> extra) {
        this(status, error, detail, extra, false);
    }

    /**
     * An answer with no extra members that keeps the connection open.
     *
     * @param status a 4xx or 5xx status
     * @param error the code
     * @param detail the safe explanation
     */
    public Answer(int status, String error, String detail) {
        this(status, error, detail, Map.of());
    }
}
