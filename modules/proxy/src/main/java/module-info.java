/**
 * The egress supervisor proxy on Helidon WebServer: absolute-form and CONNECT forwarding, TLS interception with the
 * supervisor CA (BouncyCastle), SSRF admission, strict HTTP/1.1 framing, pooled upstream connections, and the
 * exchange pipeline that runs the policy steps the runtime binds per generation (admission, plan, L7, request chain,
 * credentials, audit). It reads no policy, engine or runtime type; the process identity it carries per connection is
 * the identity module's value.
 */
module dev.openshell.supervisor.proxy {
    requires transitive dev.openshell.middleware.spi;
    requires transitive dev.openshell.supervisor.identity;
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
