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
 * @param process the process that opened the connection, when it was identified (OCSF {@code actor.process})
 */
public record RequestFacts(String requestId, String method, String scheme, String host, int port,
                           Optional<String> networkPolicy, Optional<ProcessFacts> process) {
    /** @throws NullPointerException if any part is {@code null} */
    public RequestFacts {
        Objects.requireNonNull(requestId, "requestId");
        Objects.requireNonNull(method, "method");
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(networkPolicy, "networkPolicy");
        Objects.requireNonNull(process, "process");
    }

    /**
     * Facts without a process.
     *
     * @param requestId the supervisor's request ID
     * @param method the HTTP method
     * @param scheme {@code http} or {@code https}
     * @param host the admitted destination host
     * @param port the destination port
     * @param networkPolicy the admitting network policy key, if any
     */
    public RequestFacts(String requestId, String method, String scheme, String host, int port,
                        Optional<String> networkPolicy) {
        this(requestId, method, scheme, host, port, networkPolicy, Optional.empty());
    }
}
