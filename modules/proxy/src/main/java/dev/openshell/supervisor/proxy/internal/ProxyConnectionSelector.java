package dev.openshell.supervisor.proxy.internal;

import io.helidon.common.buffers.BufferData;
import io.helidon.webserver.ConnectionContext;
import io.helidon.webserver.spi.ServerConnection;
import io.helidon.webserver.spi.ServerConnectionSelector;
import java.util.Set;

/**
 * Claims every connection of the proxy listener, ahead of Helidon's own HTTP/1 selector, so that CONNECT, absolute-form
 * requests and the strict framing rules are all handled by {@link ProxySession}.
 */
public final class ProxyConnectionSelector implements ServerConnectionSelector {
    private final ProxyCore core;

    /** @param core the shared proxy state */
    public ProxyConnectionSelector(ProxyCore core) {
        this.core = core;
    }

    @Override
    public int bytesToIdentifyConnection() {
        return 0;
    }

    @Override
    public Support supports(BufferData data) {
        return Support.SUPPORTED;
    }

    @Override
    public Set<String> supportedApplicationProtocols() {
        return Set.of();
    }

    @Override
    public ServerConnection connection(ConnectionContext ctx) {
        return new ProxyConnection(ctx, core);
    }
}
