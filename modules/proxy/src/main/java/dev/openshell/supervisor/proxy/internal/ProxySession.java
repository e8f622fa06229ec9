package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.io.OutputStream;

/**
 * One client connection's request loop, one request at a time (no pipelined request is read before the previous
 * response is complete, so every request is evaluated on its own), and the answer to every error that ends one.
 *
 * <p>Following one request through the code passes each class once: {@link RequestReader} (head, target, Host,
 * framing, Connection, Expect), {@link ExchangePipeline} (admission, plan, body decision and buffering, hook,
 * credentials, outbound head), {@link UpstreamForwarder} (pooled connection, body, retry), {@link ResponseRelay}
 * (interim and final response), and {@link UpgradeRelay} after a {@code 101}. A CONNECT goes to
 * {@link ConnectTunnel}, which runs a new session inside the tunnel.
 */
final class ProxySession {
    private final ProxyCore core;
    private final ClientStream client;
    private final Tunnel tunnel;
    private final RequestReader reader;

    ProxySession(ProxyCore core, ClientStream client, Tunnel tunnel) {
        this.core = core;
        this.client = client;
        this.tunnel = tunnel;
        this.reader = new RequestReader(client.in, tunnel);
    }

    /** A session on a client connection, outside any tunnel. */
    ProxySession(ProxyCore core, HttpInput in, OutputStream out, Runnable closer, ConnectionState state,
                 dev.openshell.supervisor.proxy.ClientConnection connection) {
        this(core, new ClientStream(in, out, closer, state, connection), null);
    }

    /** Serves requests until the client closes, an error closes the connection, or the proxy drains. */
    void loop() throws IOException {
        while (true) {
            client.state.waiting();
            if (!client.in.awaitData()) {
                return; // waiting for a first byte is idle time, bounded by the idle timeout
            }
            ReadDeadline deadline = ReadDeadline.head(core, client, tunnel != null);
            RequestHead head;
            try {
                head = reader.readHead();
            } catch (FramingException e) {
                if (deadline.finish()) {
                    client.send(ErrorResponses.response(e.status(), e.code(), e.getMessage(), true));
                }
                return;
            } catch (IOException e) {
                deadline.finish();
                throw e;
            }
            if (!deadline.finish()) {
                return; // the deadline expired: answered 408 and closed
            }
            if (head == null || !client.state.startRequest()) {
                return;
            }
            client.resetResponse();
            boolean keepAlive;
            ExchangePipeline exchange = null;
            try {
                if (head.method().equals("CONNECT")) {
                    ConnectTunnel.open(core, client, reader.connectAuthority(head));
                    return;
                }
                ParsedRequest req = reader.parse(head);
                exchange = new ExchangePipeline(core, client, reader, tunnel);
                keepAlive = exchange.run(req);
            } catch (FramingException e) {
                refuse(e.status(), e.code(), e.getMessage());
                return;
            } catch (Refusal r) {
                refuse(r.status(), r.error(), r.detail());
                return;
            } catch (UpstreamIOException e) {
                if (UpstreamPool.isTimeout(e)) {
                    refuse(504, "upstream_timeout", "the upstream did not answer in time");
                } else if (e.isTls()) {
                    refuse(502, "upstream_tls_failed", "TLS with the upstream failed (certificate not trusted?)");
                } else {
                    refuse(502, "upstream_failed", "the upstream connection failed");
                }
                return;
            } finally {
                if (exchange != null) {
                    exchange.close();
                }
                client.state.endRequest();
            }
            if (!keepAlive || client.state.draining()) {
                return;
            }
        }
    }

    private void refuse(int status, String error, String detail) throws IOException {
        if (!client.isResponseStarted()) {
            client.send(ErrorResponses.response(status, error, detail, true));
        }
    }
}
