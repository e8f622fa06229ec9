package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ClientConnection;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The client side of one connection (or of one tunnel inside it): the input and output streams, the connection's
 * state, how to close the socket, and whether a response to the request in progress has begun (after that, an error
 * can only close the connection, never answer).
 */
final class ClientStream {
    final HttpInput in;
    /**
     * The connection's raw input, outside any TLS tunnel: {@link #in} itself, or inside an intercepted tunnel the
     * bytes {@link #in}'s TLS records arrive in (what a lingering close drains, {@link LingeringClose#cutOff}).
     */
    final HttpInput raw;
    final OutputStream out;
    final Runnable closer;
    final ConnectionState state;
    /** The connection as admission and the hooks see it: addresses and the per-connection identity. */
    final ClientConnection connection;
    private boolean responseStarted;
    /** Whether these are the streams inside a TLS tunnel (the watchdogs then close without answering). */
    private final boolean tunnel;

    ClientStream(HttpInput in, OutputStream out, Runnable closer, ConnectionState state,
                 ClientConnection connection) {
        this(in, in, out, closer, state, connection, false);
    }

    private ClientStream(HttpInput in, HttpInput raw, OutputStream out, Runnable closer, ConnectionState state,
                         ClientConnection connection, boolean tunnel) {
        this.tunnel = tunnel;
        this.in = in;
        this.raw = raw;
        this.out = out;
        this.closer = closer;
        this.state = state;
        this.connection = connection;
    }

    /** {@return the same connection, state and socket over other streams (the inside of a TLS tunnel)} */
    ClientStream inner(HttpInput innerIn, OutputStream innerOut) {
        return new ClientStream(innerIn, raw, innerOut, closer, state, connection, true);
    }

    /** {@return whether these are the streams inside a TLS tunnel} */
    boolean inTunnel() {
        return tunnel;
    }

    /** Writes a complete response (or interim response) and flushes. */
    void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /** Notes that response bytes for the request in progress reached the client. */
    void responseStarted() {
        responseStarted = true;
    }

    boolean isResponseStarted() {
        return responseStarted;
    }

    /** Starts a new request. */
    void resetResponse() {
        responseStarted = false;
    }
}
