package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;

/** A client of the proxy's TLS interception for tests: CONNECT, TLS with the proxy's leaf, one request. */
final class Intercepted {
    private Intercepted() {
    }

    /** {@return everything read back after sending {@code request} through a CONNECT to {@code authority}} */
    static String exchange(ProxyFixture fx, String authority, String request) throws Exception {
        try (RawClient c = fx.client()) {
            c.send("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n");
            assertTrue(c.readHead().startsWith("HTTP/1.1 200 "));
            String host = authority.substring(0, authority.lastIndexOf(':'));
            int port = Integer.parseInt(authority.substring(authority.lastIndexOf(':') + 1));
            javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) fx.trustProxyCa().getSocketFactory()
                    .createSocket(c.socket(), host, port, false);
            tls.setSoTimeout(10_000);
            tls.startHandshake();
            tls.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            tls.getOutputStream().flush();
            return new String(tls.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }
}
