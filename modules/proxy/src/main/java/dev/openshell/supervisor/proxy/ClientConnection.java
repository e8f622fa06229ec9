package dev.openshell.supervisor.proxy;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * One client connection accepted by the proxy listener, as admission and the hooks see it: both socket addresses, and
 * one value the runtime attaches to the connection the first time it asks (the identity of the process behind it,
 * computed once per connection and reused by every request on it, including every request inside a CONNECT tunnel).
 *
 * <p>Thread-safe: the attachment is computed at most once, by the first caller, and others wait for it.
 */
public final class ClientConnection {
    private final Optional<InetSocketAddress> client;
    private final Optional<InetSocketAddress> local;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Object attachment;

    /**
     * A connection.
     *
     * @param client the client's address (the accepted socket's remote end), when the listener reports it
     * @param local the proxy's address the client connected to (the accepted socket's local end), when reported
     */
    public ClientConnection(Optional<InetSocketAddress> client, Optional<InetSocketAddress> local) {
        this.client = Objects.requireNonNull(client, "client");
        this.local = Objects.requireNonNull(local, "local");
    }

    /** {@return a connection without addresses (tests, and hooks called outside a connection)} */
    public static ClientConnection unknown() {
        return new ClientConnection(Optional.empty(), Optional.empty());
    }

    /** {@return the client's address, if known} */
    public Optional<InetSocketAddress> client() {
        return client;
    }

    /** {@return the proxy's local address, if known} */
    public Optional<InetSocketAddress> local() {
        return local;
    }

    /**
     * {@return the value attached to this connection, computing it with {@code compute} on the first call}
     *
     * @param type the value's type; every caller must ask for the same type
     * @param compute computes the value from this connection; called at most once per connection
     * @param <T> the type
     * @throws ClassCastException if a value of another type is attached
     */
    public <T> T attachment(Class<T> type, Function<ClientConnection, T> compute) {
        Object a = attachment;
        if (a == null) {
            lock.lock(); // not synchronized: the computation blocks on file reads, on a virtual thread
            try {
                a = attachment;
                if (a == null) {
                    a = Objects.requireNonNull(compute.apply(this), "attachment");
                    attachment = a;
                }
            } finally {
                lock.unlock();
            }
        }
        return type.cast(a);
    }

    /**
     * {@return the attached value, if it was computed already (never computes it)}
     *
     * @param type the value's type
     * @param <T> the type
     */
    public <T> Optional<T> attachmentIfPresent(Class<T> type) {
        Object a = attachment;
        return a == null ? Optional.empty() : Optional.of(type.cast(a));
    }

    /** {@return the addresses, never the attachment} */
    @Override
    public String toString() {
        return "ClientConnection[" + client.map(Object::toString).orElse("?") + " -> "
                + local.map(Object::toString).orElse("?") + "]";
    }
}
