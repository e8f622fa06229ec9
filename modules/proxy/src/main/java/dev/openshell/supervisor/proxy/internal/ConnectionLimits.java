package dev.openshell.supervisor.proxy.internal;

import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Caps on open client connections of the proxy listener: in total, and per client address. Each open connection
 * holds a read buffer and may hold a request head of up to 64 KiB while it is read, so the caps bound the memory
 * that unfinished heads can take (about {@code maxTotal} times 80 KiB). A connection over a cap is closed before a
 * byte of it is read and counted by its refusal reason ({@code connection_limit}, {@code client_connection_limit}).
 * Thread-safe.
 */
public final class ConnectionLimits {
    private final int maxTotal;
    private final int maxPerClient;
    private final AtomicInteger open = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, Integer> perClient = new ConcurrentHashMap<>();

    /**
     * @param maxTotal the most client connections open at once; at least 1
     * @param maxPerClient the most open at once from one client address; 1..{@code maxTotal}
     * @throws IllegalArgumentException when a cap is out of range
     */
    public ConnectionLimits(int maxTotal, int maxPerClient) {
        if (maxTotal < 1 || maxPerClient < 1 || maxPerClient > maxTotal) {
            throw new IllegalArgumentException("connection limits " + maxTotal + " total, " + maxPerClient
                    + " per client are out of range (1 <= per client <= total)");
        }
        this.maxTotal = maxTotal;
        this.maxPerClient = maxPerClient;
    }

    /** {@return the connections open now} */
    public int open() {
        return open.get();
    }

    /**
     * Claims a slot for a new connection.
     *
     * @param client the client address; {@code null} when unknown (counted in the total only)
     * @return {@code null} when admitted (give the slot back with {@link #release}), else the refusal reason
     */
    String acquire(InetAddress client) {
        if (open.incrementAndGet() > maxTotal) {
            open.decrementAndGet();
            return "connection_limit";
        }
        if (client != null) {
            boolean[] over = new boolean[1];
            perClient.compute(client, (k, n) -> {
                int c = n == null ? 0 : n;
                if (c >= maxPerClient) {
                    over[0] = true;
                    return n;
                }
                return c + 1;
            });
            if (over[0]) {
                open.decrementAndGet();
                return "client_connection_limit";
            }
        }
        return null;
    }

    /** Gives back the slot of a connection {@link #acquire} admitted. */
    void release(InetAddress client) {
        open.decrementAndGet();
        if (client != null) {
            perClient.computeIfPresent(client, (k, n) -> n <= 1 ? null : n - 1);
        }
    }
}
