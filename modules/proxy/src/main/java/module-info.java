/**
 * The egress supervisor proxy on Helidon WebServer: absolute-form and CONNECT forwarding, TLS interception with the
 * supervisor CA (BouncyCastle), L4 and SSRF admission, strict HTTP/1.1 framing, the middleware and credential hook
 * points, pooled upstream connections.
 */
module dev.openshell.supervisor.proxy {
    requires transitive dev.openshell.middleware.spi;
    requires io.helidon.webserver;
    requires io.helidon.common.socket;
    requires io.helidon.common.buffers;
    requires io.helidon.common.concurrency.limits;
    requires org.bouncycastle.provider;
    requires org.bouncycastle.pkix;
    requires org.bouncycastle.util;
    requires com.github.benmanes.caffeine;

    exports dev.openshell.supervisor.proxy;
}
