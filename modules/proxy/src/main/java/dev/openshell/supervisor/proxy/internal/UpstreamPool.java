package dev.openshell.supervisor.proxy.internal;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * Upstream connections, pooled per destination (scheme, host, port) where safe.
 *
 * <p>Connections are made only to addresses the SSRF check returned, with TCP_NODELAY, a connect timeout and a read
 * timeout. TLS connections verify the certificate against {@link UpstreamTls} with HTTPS hostname verification, send
 * SNI for DNS names and offer ALPN {@code http/1.1} only. A connection goes back to the pool only after a response
 * whose end was known from its framing; idle connections are closed after the idle timeout. All I/O errors on
 * returned connections surface as {@link UpstreamIOException}.
 *
 * <p>Two waits are bounded by one pool-wide timer instead of a timer per read. An idle connection's watcher reads
 * without a socket timeout; the sweeper (one daemon platform thread per pool, waking every tick: an eighth of the
 * shorter of the idle and read timeouts, 1 to 100 ms) closes connections idle for longer than the idle timeout. A
 * reused connection's first wait for its response (the watcher's read, see {@link Connection#awaitReadable()}) has a
 * deadline of the read timeout from the moment the connection was taken, which the sweeper enforces by closing the
 * connection: the wait then fails as a read timeout ({@link #isTimeout(IOException)}). Both limits hold to within one
 * tick. Every other read of a connection keeps the socket's read timeout.
 */
public final class UpstreamPool implements AutoCloseable {
    /**
     * Most idle connections kept per destination: 256, above the concurrency of a busy client (128 connections in
     * the load runs of issue 23, where a cap of 32 closed three of four connections on release and opened 0.96 new
     * upstream connections per request). Each idle connection holds one socket and one parked watcher thread until
     * the pool's sweeper closes it at the idle timeout, even with no later request.
     */
    public static final int MAX_IDLE_PER_DESTINATION = 256;

    /**
     * A pool key.
     *
     * @param tls whether the connection speaks TLS
     * @param host the normalised host (SNI and certificate name)
     * @param port the port
     */
    public record Key(boolean tls, String host, int port) {
    }

    private final UpstreamTls tls;
    private final Duration connectTimeout;
    private final Duration readTimeout;
    private final Duration idleTimeout;
    private final Map<Key, Deque<Connection>> idle = new ConcurrentHashMap<>();
    /** Reused connections whose watcher still waits for the response, each with its deadline. */
    private final Set<Connection> awaiting = ConcurrentHashMap.newKeySet();
    private final AtomicLong opened = new AtomicLong();
    private final Thread sweeper;
    private volatile boolean closed;

    /**
     * @param tls upstream trust
     * @param connectTimeout the TCP connect (and TLS handshake) timeout
     * @param readTimeout the longest wait for upstream bytes
     * @param idleTimeout how long an idle connection is kept
     */
    public UpstreamPool(UpstreamTls tls, Duration connectTimeout, Duration readTimeout, Duration idleTimeout) {
        this.tls = tls;
        this.connectTimeout = connectTimeout;
        this.readTimeout = readTimeout;
        this.idleTimeout = idleTimeout;
        this.sweeper = Thread.ofPlatform().daemon().name("upstream-pool-sweeper").unstarted(this::sweepUntilClosed);
        sweeper.start();
    }

    /**
     * {@return how often the sweeper checks the idle and first-response deadlines}: an eighth of the shorter of the
     * idle and read timeouts, between 1 and 100 ms
     */
    Duration tick() {
        long shorter = Math.min(idleTimeout.toMillis(), readTimeout.toMillis());
        return Duration.ofMillis(Math.clamp(shorter / 8, 1, 100));
    }

    /** {@return how many connections were opened since start} */
    public long openedConnections() {
        return opened.get();
    }

    /**
     * Takes an idle connection idle for at most {@code maxIdle} to one of {@code addresses}, or opens a new one.
     *
     * @param key the destination
     * @param addresses the SSRF-checked addresses, tried in order
     * @param maxIdle the longest idle time acceptable for reuse; {@link Duration#ZERO} forces a new connection
     * @return a connection
     * @throws UpstreamIOException when no address accepts a connection or the TLS handshake fails
     */
    public Connection acquire(Key key, List<InetAddress> addresses, Duration maxIdle) throws UpstreamIOException {
        if (!maxIdle.isZero()) {
            Deque<Connection> q = idle.get(key);
            if (q != null) {
                long now = System.nanoTime();
                List<Connection> stale = new ArrayList<>();
                Connection candidate = null;
                synchronized (q) {
                    Connection c;
                    while ((c = q.peekFirst()) != null) {
                        long idleNanos = now - c.idleSince;
                        if (idleNanos > idleTimeout.toNanos() || !addresses.contains(c.address)
                                || c.socket.isClosed() || c.dead) {
                            stale.add(q.pollFirst());
                            continue;
                        }
                        if (idleNanos <= maxIdle.toNanos()) {
                            candidate = q.pollFirst();
                            candidate.acquired = true;
                        }
                        break; // the most recently used one is too old for this request: so are the others
                    }
                }
                stale.forEach(Connection::close);
                if (candidate != null) {
                    candidate.reused = true;
                    // the watcher's read is this request's first wait for its response: bounded by the sweeper
                    candidate.deadline = now + readTimeout.toNanos();
                    awaiting.add(candidate);
                    return candidate;
                }
            }
        }
        return open(key, addresses);
    }

    private Connection open(Key key, List<InetAddress> addresses) throws UpstreamIOException {
        IOException last = null;
        for (InetAddress address : addresses) {
            Socket s = new Socket();
            try {
                s.setTcpNoDelay(true);
                s.connect(new InetSocketAddress(address, key.port()), (int) connectTimeout.toMillis());
                Socket used = s;
                if (key.tls()) {
                    s.setSoTimeout((int) connectTimeout.toMillis());
                    SSLSocket ssl = (SSLSocket) tls.context().getSocketFactory()
                            .createSocket(s, key.host(), key.port(), true);
                    SSLParameters p = ssl.getSSLParameters();
                    p.setEndpointIdentificationAlgorithm("HTTPS");
                    p.setApplicationProtocols(new String[] {"http/1.1"});
                    if (key.host().indexOf(':') < 0 && !Character.isDigit(key.host().charAt(key.host().length() - 1))) {
                        p.setServerNames(List.of(new SNIHostName(key.host())));
                    }
                    ssl.setSSLParameters(p);
                    ssl.startHandshake();
                    used = ssl;
                }
                used.setSoTimeout((int) readTimeout.toMillis());
                opened.incrementAndGet();
                return new Connection(key, address, used, (int) readTimeout.toMillis(), awaiting);
            } catch (IOException e) {
                last = e;
                try {
                    s.close();
                } catch (IOException ignored) {
                    // already failing
                }
            }
        }
        throw new UpstreamIOException(last == null ? new IOException("no address") : last);
    }

    /**
     * Returns a connection for reuse, or closes it when the pool is closed or full.
     *
     * @param c a connection whose last response was read completely
     */
    public void release(Connection c) {
        if (closed || c.socket.isClosed()) {
            c.close();
            return;
        }
        c.idleSince = System.nanoTime();
        try {
            // the watcher reads without a timer: the sweeper closes the connection at the idle timeout
            c.socket.setSoTimeout(0);
        } catch (IOException e) {
            c.close();
            return;
        }
        Deque<Connection> q = idle.computeIfAbsent(c.key, k -> new ArrayDeque<>());
        // the watcher must exist before another thread can take the connection: that thread joins it before reading
        c.acquired = false;
        c.watch(() -> {
            boolean removed;
            synchronized (q) {
                removed = !c.acquired && q.remove(c);
            }
            if (removed) {
                c.close();
            }
        });
        boolean kept;
        synchronized (q) {
            kept = q.size() < MAX_IDLE_PER_DESTINATION;
            if (kept) {
                q.addFirst(c);
            }
        }
        if (!kept) {
            c.acquired = true;
            c.close();
        }
    }

    private void sweepUntilClosed() {
        long tickNanos = tick().toNanos();
        while (!closed) {
            LockSupport.parkNanos(tickNanos);
            sweep(System.nanoTime());
        }
    }

    /** Closes the idle connections past the idle timeout and the awaited ones past their deadline. */
    private void sweep(long now) {
        List<Connection> expired = new ArrayList<>();
        for (Deque<Connection> q : idle.values()) {
            synchronized (q) {
                Connection c;
                // most recently released first: the oldest are at the tail
                while ((c = q.peekLast()) != null && now - c.idleSince > idleTimeout.toNanos()) {
                    expired.add(q.pollLast());
                }
            }
        }
        expired.forEach(Connection::close);
        for (Connection c : awaiting) {
            if (now - c.deadline > 0 && awaiting.remove(c)) {
                c.timedOut = true;
                c.close(); // the watcher's read fails; awaitReadable reports a read timeout
            }
        }
    }

    /** Closes every idle connection; later releases close their connection. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(sweeper);
        for (Deque<Connection> q : idle.values()) {
            synchronized (q) {
                q.forEach(Connection::close);
                q.clear();
            }
        }
    }

    /** One upstream connection. Streams throw {@link UpstreamIOException}. */
    public static final class Connection {
        private final Key key;
        private final InetAddress address;
        private final Socket socket;
        private final HttpInput in;
        private final OutputStream out;
        private volatile long idleSince;
        private boolean reused;
        /** Set under the pool queue's lock when taken from the pool. */
        private volatile boolean acquired = true;
        /** Set when the idle watcher saw the upstream close, or send unsolicited bytes. */
        private volatile boolean dead;
        private volatile Thread watcher;
        private volatile IOException watchError;
        private final int readTimeoutMillis;
        /** While in the pool's awaiting set: the {@link System#nanoTime()} by which the response must begin. */
        private volatile long deadline;
        /** Set by the sweeper when it closed this connection at its deadline. */
        private volatile boolean timedOut;
        /** The awaiting set of the pool that opened this connection. */
        private final Set<Connection> awaiting;

        Connection(Key key, InetAddress address, Socket socket, int readTimeoutMillis, Set<Connection> awaiting)
                throws IOException {
            this.awaiting = awaiting;
            this.readTimeoutMillis = readTimeoutMillis;
            this.key = key;
            this.address = address;
            this.socket = socket;
            this.in = new HttpInput(new UpstreamStreams.TaggedIn(socket.getInputStream()), true);
            this.out = new BufferedOutputStream(new UpstreamStreams.TaggedOut(socket.getOutputStream()),
                    16 * 1024);
        }

        /**
         * Sets the read timeout of the next reads, in milliseconds; {@code 0} restores the pool's read timeout.
         *
         * @param millis the timeout, at least 1, or 0
         */
        void readTimeout(int millis) throws IOException {
            socket.setSoTimeout(millis <= 0 ? readTimeoutMillis : Math.min(millis, readTimeoutMillis));
        }

        /**
         * While pooled, a virtual thread waits for the first byte without consuming it, so a connection the upstream
         * closes while idle leaves the pool at once instead of failing the next request (RFC 9112 section 9.3.1).
         * Bytes that arrive after the connection was taken again are the next response and stay buffered.
         */
        private void watch(Runnable onDeath) {
            watchError = null;
            watcher = Thread.ofVirtual().name("upstream-idle-watch").start(() -> {
                try {
                    if (in.peek() < 0 || !acquired) {
                        dead = true;
                    }
                } catch (IOException e) {
                    // the upstream reset it, or the sweeper closed it (idle timeout, or the response's deadline)
                    watchError = e;
                    dead = true;
                }
                if (dead) {
                    onDeath.run();
                }
            });
        }

        /**
         * Waits until the idle watcher has stopped reading, so this thread may read; call after sending a request on
         * a reused connection, before reading the response.
         *
         * @throws UpstreamIOException when the watcher saw the connection fail
         */
        public void awaitReadable() throws UpstreamIOException {
            Thread w = watcher;
            if (w == null) {
                return;
            }
            try {
                w.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UpstreamIOException(new java.io.InterruptedIOException("interrupted"));
            } finally {
                awaiting.remove(this);
            }
            watcher = null;
            if (timedOut) {
                throw new UpstreamIOException(new SocketTimeoutException("no response within the read timeout"));
            }
            IOException e = watchError;
            if (e != null) {
                throw e instanceof UpstreamIOException u ? u : new UpstreamIOException(e);
            }
            try {
                socket.setSoTimeout(readTimeoutMillis); // the watcher read with the idle timeout
            } catch (IOException failed) {
                throw new UpstreamIOException(failed);
            }
        }

        /** {@return the destination} */
        public Key key() {
            return key;
        }

        /** {@return the input} */
        public HttpInput in() {
            return in;
        }

        /** {@return the buffered output} */
        public OutputStream out() {
            return out;
        }

        /** {@return whether this connection served an earlier request} */
        public boolean reused() {
            return reused;
        }

        /** Half-closes the output (end of a tunnelled stream). */
        public void shutdownOutput() {
            try {
                if (!(socket instanceof SSLSocket)) {
                    socket.shutdownOutput();
                } else {
                    socket.close();
                }
            } catch (IOException ignored) {
                // the peer is gone
            }
        }

        /** Closes the socket. */
        public void close() {
            awaiting.remove(this);
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }

        /**
         * Disables the read timeout (tunnels and WebSocket relays may be quiet for long).
         *
         * @param timeout the new timeout; zero waits forever
         */
        public void readTimeout(Duration timeout) {
            try {
                socket.setSoTimeout((int) timeout.toMillis());
            } catch (IOException ignored) {
                // closed already
            }
        }
    }

    /** {@return whether {@code e} is, or wraps, a read timeout} @param e an upstream failure */
    public static boolean isTimeout(IOException e) {
        return e instanceof SocketTimeoutException || e.getCause() instanceof SocketTimeoutException;
    }
}
