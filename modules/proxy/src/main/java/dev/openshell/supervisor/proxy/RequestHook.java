package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;

/**
 * The middleware hook point (RFC 0009, "Operation phases and placement": after L4, SSRF and L7 admission, before
 * credential injection). The chain engine implements it; the proxy owns framing, buffering and forwarding.
 *
 * <p>For every admitted request the proxy calls {@link #select}. With {@link ChainSelection.None} the request streams
 * through byte-identical with no buffering and {@link #evaluate} is not called. With
 * {@link ChainSelection.Selected} the proxy:
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
     * Selects the chain for an admitted request (RFC 0009, "Host selector").
     *
     * @param request the request head; never {@code null}
     * @return the selection; never {@code null}
     */
    ChainSelection select(ProxyRequest request);

    /**
     * Runs the chain, then any body-aware L7 re-evaluation, on a buffered body.
     *
     * @param request the request head as received
     * @param body the buffered body, at most the selection's cap; empty when the request has no body
     * @return forward or deny; never {@code null}
     */
    HookResult evaluate(ProxyRequest request, Body body);

    /**
     * Reports a request whose body could not be inspected; the engine emits the matching finding (RFC 0009,
     * "Observability": bypass or denial). The default does nothing.
     *
     * @param request the request head
     * @param what why, and whether it was relayed
     */
    default void uninspectable(ProxyRequest request, Uninspectable what) {
    }

    /**
     * Reports a destination refused by admission, before any chain is selected (for metrics by admission outcome).
     * Called once per refused request, or per refused CONNECT. The default does nothing.
     *
     * @param error the client-visible error code: {@code policy_denied} (L4 network policy, 403),
     *     {@code ssrf_blocked} (403) or {@code unresolvable_host} (502)
     */
    default void admissionRefused(String error) {
    }

    /** {@return a hook that never selects a chain} */
    static RequestHook none() {
        return new RequestHook() {
            @Override
            public ChainSelection select(ProxyRequest request) {
                return ChainSelection.none();
            }

            @Override
            public HookResult evaluate(ProxyRequest request, Body body) {
                throw new IllegalStateException("evaluate called without a selected chain");
            }
        };
    }
}
