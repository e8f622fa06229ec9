package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;

/**
 * The middleware hook point (RFC 0009, "Operation phases and placement": after L4, SSRF and L7 admission, before
 * credential injection). The chain engine implements it; the proxy owns framing, buffering and forwarding.
 *
 * <p>For every request past L4 and SSRF admission the proxy calls {@link #plan} once and hands the returned
 * {@link RequestPlan} back to every later call for that request ({@link #evaluate}, {@link #uninspectable},
 * {@link CredentialInjection#inject}); the hook keeps no per-request state of its own. When the plan's
 * {@link RequestPlan#admission()} is a denial the proxy answers 403 and calls nothing else. With
 * {@link ChainSelection.None} the request streams through byte-identical with no buffering and {@link #evaluate} is
 * not called. With {@link ChainSelection.Selected} the proxy:
 * <ol>
 *   <li>answers 413 before reading the body, and calls {@link #uninspectable}, when the declared Content-Length
 *       exceeds the cap and not every affected stage is fail_open;</li>
 *   <li>streams the body unprocessed, and calls {@link #uninspectable}, when it exceeds the cap and every affected
 *       stage is fail_open ({@link #evaluate} is not called);</li>
 *   <li>answers 413 and closes, and calls {@link #uninspectable}, when a chunked body crosses the cap;</li>
 *   <li>otherwise answers {@code Expect: 100-continue}, buffers the body and calls {@link #evaluate}.</li>
 * </ol>
 * Methods run on the connection's virtual thread, may block, and must be thread-safe. A {@link RuntimeException}
 * from any of them fails the request closed with 500 (the engine applies {@code on_error} itself; an exception here
 * is a bug).
 */
public interface RequestHook {
    /**
     * Plans one admitted request: the generation that serves it, its admission by that generation and the chain it
     * selects (RFC 0009, "Host selector"). Called once per request, before any body byte is read.
     *
     * @param request the request head; never {@code null}
     * @return the plan; never {@code null}
     */
    RequestPlan plan(ProxyRequest request);

    /**
     * Runs the chain, then any body-aware L7 re-evaluation, on a buffered body.
     *
     * @param plan the plan {@link #plan} returned for this request
     * @param request the request head as received
     * @param body the buffered body, at most the selection's cap; empty when the request has no body
     * @return forward or deny; never {@code null}
     */
    HookResult evaluate(RequestPlan plan, ProxyRequest request, Body body);

    /**
     * Reports a request whose body could not be inspected; the engine emits the matching finding (RFC 0009,
     * "Observability": bypass or denial). The default does nothing.
     *
     * @param plan the plan {@link #plan} returned for this request
     * @param request the request head
     * @param what why, and whether it was relayed
     */
    default void uninspectable(RequestPlan plan, ProxyRequest request, Uninspectable what) {
    }

    /**
     * Reports a destination refused by admission, before any chain is selected (for metrics by admission outcome).
     * Called once per refused request, or per refused CONNECT; not for a denial in a {@link RequestPlan} (the hook
     * made that one itself). The default does nothing.
     *
     * @param error the client-visible error code: {@code policy_denied} (L4 network policy, 403),
     *     {@code ssrf_blocked} (403) or {@code unresolvable_host} (502)
     */
    default void admissionRefused(String error) {
    }

    /**
     * Reports a request the proxy answered itself without forwarding it: {@code TRACE} to an endpoint without
     * {@code trace: allow} ({@code 405}, {@code method_not_allowed}), a {@code TRACE} that would carry a credential
     * ({@code 403}, {@code credential_trace_not_allowed}), or {@code OPTIONS} (or an allowed {@code TRACE}) with
     * {@code Max-Forwards: 0} ({@code 200}, {@code max_forwards_exhausted}; RFC 9110 section 7.6.2). The default
     * does nothing.
     *
     * @param plan the plan {@link #plan} returned for this request
     * @param request the request head
     * @param status the status the client got
     * @param code the platform code
     */
    default void answeredLocally(RequestPlan plan, ProxyRequest request, int status, String code) {
    }

    /**
     * Reports a response from which injected credential values were removed before it reached the client (issue
     * 22, item 2); called once per such response, after it was relayed (or cut off). The default does nothing.
     *
     * @param plan the plan {@link #plan} returned for this request
     * @param request the request head
     * @param credentials the names of the credentials found, sorted
     * @param headerMatches how many values were replaced in the status line and header fields
     * @param bodyMatches how many values were replaced in the body
     */
    default void responseScrubbed(RequestPlan plan, ProxyRequest request, java.util.Set<String> credentials,
                                  long headerMatches, long bodyMatches) {
    }

    /**
     * Reports the response to a request that carried a credential whose body the proxy could not scan for the
     * injected values: a content coding other than {@link InjectedCredentials#DECODABLE_CODINGS}, or a compressed
     * body that does not decode. The default does nothing.
     *
     * @param plan the plan {@link #plan} returned for this request
     * @param request the request head
     * @param code {@code response_uninspectable}
     * @param relayed whether the body was relayed unscanned (every credential allows it) rather than answered
     *     {@code 502} (or, when the failure came after the head was sent, cut off)
     */
    default void responseUninspectable(RequestPlan plan, ProxyRequest request, String code, boolean relayed) {
    }

    /**
     * Called once per connection or request refused by a resource limit, before or instead of its admission. The
     * default does nothing.
     *
     * @param reason {@code connection_limit} (connection closed unserved: the proxy-wide cap),
     *     {@code client_connection_limit} (closed unserved: the cap per client address), {@code request_head_timeout}
     *     (408: the head was not complete within its deadline), {@code body_buffer_timeout} (408: a body buffered
     *     for the chain was not complete within its deadline), {@code body_min_rate} (408: a request body, buffered
     *     or streamed, arrived slower than the minimum data rate), {@code body_buffer_busy} (503: no room in the
     *     body buffer budget in time), {@code client_body_buffer_limit} (503: the client address held its whole
     *     share of the body buffer budget for the whole wait)
     */
    default void limitRefused(String reason) {
    }

    /**
     * Reports a request or connection the proxy refused by one of its own rules: network policy and SSRF admission,
     * HTTP/1.1 framing, resource limits, upstream connect/TLS/response failures, TLS interception, internal faults.
     * Called exactly once per refusal, on the thread that decided it (a watchdog thread for a deadline), before or
     * while the answer is sent; in addition to {@link #admissionRefused} and {@link #limitRefused}, which count.
     * Not called for refusals the hook made itself (a denial in a {@link RequestPlan}, a credential refusal, a
     * middleware deny, an uninspectable body: the hook reports those). Must not block for long and must not throw
     * (an exception is logged and ignored). The default does nothing.
     *
     * @param refusal what was refused, why, and what the client got
     */
    default void refused(ProxyRefusal refusal) {
    }

    /**
     * Called once per request whose body is buffered for the chain, with how long it waited for room in the body
     * buffer budget (0 when there was room at once; the wait is bounded by the proxy's body buffer wait). The
     * default does nothing.
     *
     * @param nanos the wait, in nanoseconds
     */
    default void bodyBufferWaited(long nanos) {
    }

    /**
     * Called on a thread that is about to write bytes to a client socket or close one: before each write (a response
     * head, body bytes, an interim response, TLS records of an intercepted tunnel) and before each close (a
     * connection refused unserved, a request cut off). The supervisor waits there, bounded, until the audit events
     * that thread emitted have been written, so that what it sends next never reaches the client before them
     * ({@code docs/observability.md}). Must be cheap when there is nothing to wait for, and must not throw (an
     * exception is ignored). The default does nothing.
     */
    default void beforeClientOutput() {
    }

    /** {@return a hook that never selects a chain} */
    static RequestHook none() {
        return new RequestHook() {
            @Override
            public RequestPlan plan(ProxyRequest request) {
                return RequestPlan.of(0, AdmissionDecision.allow(request.endpoint()), ChainSelection.none());
            }

            @Override
            public HookResult evaluate(RequestPlan plan, ProxyRequest request, Body body) {
                throw new IllegalStateException("evaluate called without a selected chain");
            }
        };
    }
}
