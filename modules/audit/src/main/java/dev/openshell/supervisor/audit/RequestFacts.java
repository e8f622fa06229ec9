package dev.openshell.supervisor.audit;

import java.util.Objects;
import java.util.Optional;

/**
 * The safe facts about one request that audit events may carry. Deliberately no path, query, header or body: those
 * may hold the very content the supervisor exists to protect.
 *
 * @param requestId the supervisor's request ID
 * @param method the HTTP method
 * @param scheme {@code http} or {@code https}
 * @param host the admitted destination host
 * @param port the destination port, 1 to 65535
 * @param networkPolicy the network policy key that admitted the request, if any
 */
public record RequestFacts(String requestId, String method, String scheme, String host, int port,
                           Optional<String> networkPolicy) {
    /** @throws NullPointerException if any part is {@code null} */
    public RequestFacts {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(networkPolicy, "networkPolicy");
    }
}
