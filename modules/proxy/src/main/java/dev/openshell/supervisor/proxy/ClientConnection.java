package dev.openshell.supervisor.proxy;

import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * One client connection accepted by the proxy listener, as the policy steps see it: both socket addresses, the
 * connection's {@link AuditBarrier}, and the {@link ConnectionIdentity} of the process behind it, decided the first
 * time a step asks and reused by every request on the connection (including every request inside a CONNECT tunnel),
 * after a cheap check at the start of each request that the identified process still holds the socket
 * ({@link #revalidate}): a process may hand its connection to another and exit, and the connection is then decided
 * again.
 *
 * <p>Thread-safe: the identity is decided by one caller at a time, and others wait for it.
 */
public final class ClientConnection {
    private final Optional<InetSocketAddress> client;
    private final Optional<InetSocketAddress> local;
    private final AuditBarrier auditBarrier;
    private final long openedNanos = System.nanoTime();
    private final ReentrantLock lock = new ReentrantLock();
    private volatile ConnectionIdentity identity;
    private volatile boolean reidentified;

    /**
     * A connection.
     *
     * @param client the client's address (the accepted socket's remote end), when the listener reports it
     * @param local the proxy's address the client connected to (the accepted socket's local end), when reported
     * @param auditBarrier the barrier of this connection's audit lines
     */
    public ClientConnection(Optional<InetSocketAddress> client, Optional<InetSocketAddress> local,
                            AuditBarrier auditBarrier) {
        this.client = Objects.requireNonNull(client, "client");
        this.local = Objects.requireNonNull(local, "local");
        this.auditBarrier = Objects.requireNonNull(auditBarrier, "auditBarrier");
    }

    /**
     * A connection whose audit lines need no wait.
     *
     * @param client the client's address, when known
     * @param local the proxy's address, when known
     */
    public ClientConnection(Optional<InetSocketAddress> client, Optional<InetSocketAddress> local) {
        this(client, local, AuditBarrier.none());
    }

    /** {@return a connection without addresses (tests, and steps called outside a connection)} */
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
     * {@return when the proxy took up this connection, {@link System#nanoTime()} when this object was made: the
     * client's socket existed by then, so a read of {@code /proc} that started at or after it sees that socket}
     */
    public long openedNanos() {
        return openedNanos;
    }

    /** {@return the barrier of the audit lines emitted for this connection} */
    public AuditBarrier auditBarrier() {
        return auditBarrier;
    }

    /**
     * {@return the identity of the process behind this connection, decided with {@code identify} on the first call}
     *
     * @param identify decides the identity from this connection; called at most once per connection (it blocks on
     *     {@code /proc} reads: the lock is a {@link ReentrantLock}, so a virtual thread waiting here unmounts)
     */
    public ConnectionIdentity identity(Function<ClientConnection, ConnectionIdentity> identify) {
        ConnectionIdentity id = identity;
        if (id == null) {
            lock.lock();
            try {
                id = identity;
                if (id == null) {
                    id = Objects.requireNonNull(identify.apply(this), "identity");
                    identity = id;
                }
            } finally {
                lock.unlock();
            }
        }
        return id;
    }

    /**
     * Checks, at the start of a request, that the identity decided for this connection still holds, and decides it
     * again when it does not. Nothing happens before the identity was first decided.
     *
     * @param holds whether a decided identity still holds (the identified process still holds the socket); called
     *     with the lock held, once per call
     * @param identify decides the identity again, as for {@link #identity}
     * @return the identity that was replaced, when it was (the caller reports the change)
     */
    public Optional<ConnectionIdentity> revalidate(Predicate<ConnectionIdentity> holds,
                                                   Function<ClientConnection, ConnectionIdentity> identify) {
        if (identity == null) {
            return Optional.empty();
        }
        lock.lock();
        try {
            ConnectionIdentity old = identity;
            if (holds.test(old)) {
                return Optional.empty();
            }
            identity = Objects.requireNonNull(identify.apply(this), "identity");
            reidentified = true;
            return Optional.of(old);
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@return whether the identity was ever decided again ({@link #revalidate})} A tunnel admitted for the first
     * identity is then admitted again at each of its requests.
     */
    public boolean reidentified() {
        return reidentified;
    }

    /** {@return the identity, when it was decided already (never decides it)} */
    public Optional<ConnectionIdentity> identityIfDecided() {
        return Optional.ofNullable(identity);
    }

    /** {@return the addresses, never the identity} */
    @Override
    public String toString() {
        return "ClientConnection[" + client.map(Object::toString).orElse("?") + " -> "
                + local.map(Object::toString).orElse("?") + "]";
    }
}
