package dev.openshell.supervisor.proxy.internal;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;

/**
 * A CONNECT (RFC 9110 section 9.3.6): L4 and SSRF admission of the authority, then either an opaque tunnel to a
 * {@code tls: skip} endpoint ({@link UpgradeRelay}), or TLS interception with a leaf certificate of the supervisor
 * CA ({@link InterceptionTls}) and a new {@link ProxySession} over the decrypted stream (or over the plain stream
 * when the client speaks plain HTTP inside the tunnel), whose requests all go to the CONNECT authority. The client's
 * TLS handshake must be complete within {@code request_head_timeout_ms} of its first byte, as a request head must
 * ({@code tls_handshake_timeout}: audited, the connection closed unanswered).
 */
final class ConnectTunnel {
    private static final System.Logger LOG = ProxyCore.LOG;
    private static final byte[] ESTABLISHED =
            "HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private ConnectTunnel() {
    }

    /** Serves one CONNECT until the tunnel ends. */
    static void open(ProxyCore core, ClientStream client, Authority a) throws IOException, Refusal {
        ProxyCore.Admitted admitted = Pipeline.admit(core, core.policy(), a, client.connection, "CONNECT", "http");
        if (admitted.endpoint().tlsSkip()) {
            UpstreamPool.Connection c = core.pool().acquire(new UpstreamPool.Key(false, a.host(), a.port()),
                    admitted.addresses(), Duration.ZERO);
            client.send(ESTABLISHED);
            client.responseStarted();
            LOG.log(System.Logger.Level.DEBUG, "CONNECT " + a.hostPort() + " tunnelled (tls: skip)");
            UpgradeRelay.relay(client, c, core.timeouts().upstreamRead());
            return;
        }
        SSLContext ctx;
        try {
            ctx = core.interception().contextFor(a);
        } catch (GeneralSecurityException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "TLS interception unavailable for a CONNECT: " + e.getClass().getName());
            throw new Refusal(502, "tls_interception_unavailable", "TLS interception could not be set up");
        }
        client.send(ESTABLISHED);
        client.responseStarted();
        client.state.waiting();
        int first = client.in.peek();
        if (first < 0 || !client.state.startRequest()) {
            return;
        }
        if (first != 0x16) {
            new ProxySession(core, client, new Tunnel("http", admitted)).loop();
            return;
        }
        SSLEngine engine = InterceptionTls.serverEngine(ctx);
        SslEngineStream tls = new SslEngineStream(engine, client.in, client.out);
        ReadDeadline deadline = ReadDeadline.handshake(core, client);
        try {
            tls.handshake();
        } catch (IOException | RuntimeException e) {
            deadline.finish();
            LOG.log(System.Logger.Level.DEBUG, "client TLS handshake failed: " + e.getClass().getName());
            return;
        }
        if (!deadline.finish()) {
            return;
        }
        ClientStream inner = client.inner(new HttpInput(tls.in()), new BufferedOutputStream(tls.out(), 16 * 1024));
        try {
            new ProxySession(core, inner, new Tunnel("https", admitted)).loop();
        } finally {
            tls.closeOutbound();
        }
    }
}
