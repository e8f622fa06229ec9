package dev.openshell.supervisor.proxy;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Locale;

/**
 * Why a listener could not bind, in the operator's words. Helidon reports a failed bind only in its own log, so
 * after a failed start the address is bound once more, directly, to learn the cause the operating system gives
 * ({@code address already in use}, {@code cannot assign requested address}, {@code permission denied}).
 */
public final class ListenFailure {
    private ListenFailure() {
    }

    /**
     * {@return one line naming the address and the cause: {@code cannot listen on 127.0.0.1:3128: address already in
     * use}}
     *
     * @param what which listener, such as {@code proxy} or {@code admin listener}
     * @param address the address that could not be bound
     */
    public static String describe(String what, InetSocketAddress address) {
        String host = address.getHostString();
        String where = (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
        return what + " cannot listen on " + where + ": " + cause(address);
    }

    /** {@return the operating system's reason the address cannot be bound, lower case} */
    static String cause(InetSocketAddress address) {
        try (ServerSocket probe = new ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(address);
            return "the listener did not start (the address was free when checked again)";
        } catch (IOException e) {
            String m = e.getMessage();
            if (m == null || m.isBlank()) {
                return e.getClass().getSimpleName();
            }
            // "Address already in use (Bind failed)" on some platforms
            int paren = m.indexOf(" (");
            return (paren > 0 ? m.substring(0, paren) : m).toLowerCase(Locale.ROOT);
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
    }
}
