package dev.openshell.supervisor.proxy.internal;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Loopback client addresses for tests of per-address rules: two distinct clients on this machine. */
final class Loopback {
    /** {@code 127.0.0.1}. */
    static final InetAddress A = address("127.0.0.1");
    /** {@code 127.0.0.2}. */
    static final InetAddress B = address("127.0.0.2");

    private Loopback() {
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
