package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ProxyRefusal;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Optional;

/**
 * One client connection's request loop, one request at a time (no pipelined request is read before the previous
 * response is complete, so every request is evaluated on its own), and the answer to every error that ends one.
 *
 * <p>Following one request through the code passes each class once: {@link RequestReader} (head, target, Host,
 * framing, Connection, Expect), {@link Pipeline} (the exchange's steps: admission, plan, L7, body, chain,
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
            // no deadline when the whole head arrived with its first bytes (the usual request): its read cannot
            // block, and a watchdog task per request cost a timer queue insertion, a wake-up and a cancel
            ReadDeadline deadline = client.in.headBuffered() ? null : ReadDeadline.head(core, client, tunnel != null);
            RequestHead head;
            try {
                head = reader.readHead();
            } catch (FramingException e) {
                if (deadline == null || deadline.finish()) {
                    // nothing of the head is trusted: the event names the rule broken, not the bytes
                    core.report(ProxyRefusal.Kind.FRAMING, e.status(), e.code(), Optional.empty(), e.getMessage(),
                            client.connection, Optional.empty(), tunnelDestination(), Optional.empty());
                    client.send(ErrorResponses.response(e.status(), e.code(), e.getMessage(), true));
                    client.state.lingerOnClose();
                }
                return;
            } catch (IOException e) {
                if (deadline != null) {
                    deadline.finish();
                }
                throw e;
            }
            if (deadline != null && !deadline.finish()) {
                return; // the deadline expired: answered 408 and closed
            }
            if (head == null || !client.state.startRequest()) {
                return;
            }
            client.resetResponse();
            boolean keepAlive;
            Pipeline<?> exchange = null;
            Optional<ProxyRefusal.Destination> destination = tunnelDestination();
            try {
                if (head.method().equals("CONNECT")) {
                    Authority authority = reader.connectAuthority(head);
                    destination = Optional.of(ProxyCore.destination("http", authority));
                    ConnectTunnel.open(core, client, authority);
                    return;
                }
                ParsedRequest req = reader.parse(head);
                destination = Optional.of(ProxyCore.destination(req.target()));
                exchange = Pipeline.open(core, client, reader, tunnel);
                keepAlive = exchange.run(req);
            } catch (FramingException e) {
                refuse(new Refusal(ProxyRefusal.Kind.FRAMING, e.status(), e.code(), Optional.empty(), e.getMessage()),
                        head, destination, exchange);
                return;
            } catch (Refusal r) {
                refuse(r, head, destination, exchange);
                return;
            } catch (UpstreamIOException e) {
                Refusal r = ResponseFailure.refusal(e);
                refuse(e.audited() ? r.reported() : r, head, destination, exchange);
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

    /**
     * Answers a refusal that ends the exchange (unless a response has begun: then the connection just closes,
     * {@link ResponseFailure#cutOff}) and reports it once ({@link ProxyCore#report}).
     */
    private void refuse(Refusal r, RequestHead head, Optional<ProxyRefusal.Destination> destination,
                        Pipeline<?> exchange) throws IOException {
        boolean answered = !client.isResponseStarted();
        Refusal reported = answered || r.isReported() ? r : ResponseFailure.cutOff(r);
        if (exchange != null) {
            exchange.report(reported, head.method(), destination);
        } else {
            core.report(reported, client.connection, Optional.of(head.method()), destination, Optional.empty());
        }
        if (answered) {
            client.send(ErrorResponses.response(r.status(), r.error(), r.detail(), true));
            client.state.lingerOnClose(); // the client may still be sending its body (LingeringClose)
        }
    }

    private Optional<ProxyRefusal.Destination> tunnelDestination() {
        return tunnel == null ? Optional.empty()
                : Optional.of(ProxyCore.destination(tunnel.scheme(), tunnel.admitted().authority()));
    }
}
