package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.net.IpRange;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What the proxy needs to know about the policy endpoint that admitted a destination (RFC 0009, "Operation phases
 * and placement"; the endpoint fields of {@code network_policies}).
 *
 * @param policyName the name of the network policy that matched, for logs and audit; never a routing input
 * @param tlsSkip whether the endpoint is {@code tls: skip}: CONNECT is then tunnelled as opaque bytes, never
 *     intercepted, and no middleware runs
 * @param allowedIps private ranges the endpoint may resolve to ({@code allowed_ips}); loopback, link-local,
 *     unspecified, multicast and cloud metadata addresses stay blocked whatever is listed here
 * @param protocol the endpoint's declared L7 protocol ({@code rest}, {@code json-rpc}, {@code mcp}, {@code graphql}),
 *     when it declares one
 * @param upgradesAllowed whether an {@code Upgrade} request may go on under a chain with a {@code fail_closed} stage:
 *     the endpoint is {@code protocol: websocket} or says {@code upgrades: allow_uninspected} (RFC 0009, "Operation
 *     phases and placement": traffic that becomes uninspectable under such a chain is denied)
 * @param traceAllowed whether {@code TRACE} requests are forwarded ({@code trace: allow}); otherwise the proxy answers
 *     them 405 (RFC 9110 section 9.3.8: the origin reflects the request it received). Never with a credential.
 * @param binaryMessages whether the endpoint says {@code binary_messages: allow_uninspected}: WebSocket binary
 *     messages and control-frame payloads, which no stage reads, pass a session inspected under a fail_closed config
 */
public record EndpointFacts(String policyName, boolean tlsSkip, List<IpRange> allowedIps, Optional<String> protocol,
                            boolean upgradesAllowed, boolean traceAllowed, boolean binaryMessages) {
    /**
     * Checks the parts.
     *
     * @throws NullPointerException if any part is {@code null}
     */
    public EndpointFacts {
        Objects.requireNonNull(policyName, "policyName");
        allowedIps = List.copyOf(allowedIps);
        Objects.requireNonNull(protocol, "protocol");
    }

    /**
     * Facts that refuse uninspected WebSocket binary messages under a fail_closed config.
     *
     * @param policyName the matching policy's name
     * @param tlsSkip whether the endpoint is {@code tls: skip}
     * @param allowedIps the allowed private ranges
     * @param protocol the declared protocol
     * @param upgradesAllowed whether upgrades may go on under a fail_closed chain
     * @param traceAllowed whether {@code TRACE} is forwarded
     */
    public EndpointFacts(String policyName, boolean tlsSkip, List<IpRange> allowedIps, Optional<String> protocol,
                         boolean upgradesAllowed, boolean traceAllowed) {
        this(policyName, tlsSkip, allowedIps, protocol, upgradesAllowed, traceAllowed, false);
    }

    /**
     * Facts that do not forward {@code TRACE}.
     *
     * @param policyName the matching policy's name
     * @param tlsSkip whether the endpoint is {@code tls: skip}
     * @param allowedIps the allowed private ranges
     * @param protocol the declared protocol
     * @param upgradesAllowed whether upgrades may go on under a fail_closed chain
     */
    public EndpointFacts(String policyName, boolean tlsSkip, List<IpRange> allowedIps, Optional<String> protocol,
                         boolean upgradesAllowed) {
        this(policyName, tlsSkip, allowedIps, protocol, upgradesAllowed, false);
    }

    /**
     * {@return whether the endpoint says {@code binary_messages: allow_uninspected}}: WebSocket binary messages and
     * control-frame payloads pass a session inspected under a {@code fail_closed} config, uninspected. Set with
     * the {@code binaryMessages} component.
     */
    public boolean binaryMessagesAllowed() {
        return binaryMessages;
    }

    /**
     * Facts whose upgrades are allowed only for {@code protocol: websocket}.
     *
     * @param policyName the matching policy's name
     * @param tlsSkip whether the endpoint is {@code tls: skip}
     * @param allowedIps the allowed private ranges
     * @param protocol the declared protocol
     */
    public EndpointFacts(String policyName, boolean tlsSkip, List<IpRange> allowedIps, Optional<String> protocol) {
        this(policyName, tlsSkip, allowedIps, protocol, protocol.filter("websocket"::equals).isPresent());
    }

    /**
     * {@return facts for an intercepted endpoint with no allowed private ranges and no protocol}
     *
     * @param policyName
     * the matching policy's name
     */
    public static EndpointFacts of(String policyName) {
        return new EndpointFacts(policyName, false, List.of(), Optional.empty());
    }
}
