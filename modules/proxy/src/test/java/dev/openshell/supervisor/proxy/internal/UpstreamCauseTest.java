package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.supervisor.proxy.ProxyRefusal.UpstreamCause;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateExpiredException;
import javax.net.ssl.SSLHandshakeException;
import org.junit.jupiter.api.Test;

/**
 * The cause of an upstream failure, read from the JDK's exception chain as the TLS stack and sockets build it
 * (issue 19, item 1: hostname mismatch, untrusted certificate and the rest told apart). The real handshakes are in
 * {@code ProxyRefusalTest}; here every cause, including the expired certificate no test server presents.
 */
class UpstreamCauseTest {
    private static UpstreamCause cause(IOException e) {
        return new UpstreamIOException(e).cause();
    }

    private static SSLHandshakeException handshake(Throwable cause) {
        SSLHandshakeException e = new SSLHandshakeException("PKIX or other failure");
        e.initCause(cause);
        return e;
    }

    @Test
    void tlsCauses() {
        assertEquals(UpstreamCause.CERTIFICATE_EXPIRED, cause(handshake(new CertificateException(
                "validity check failed", new CertificateExpiredException("NotAfter: ...")))));
        assertEquals(UpstreamCause.CERTIFICATE_EXPIRED, cause(handshake(new CertPathValidatorException(
                "validity check failed", null, null, -1, CertPathValidatorException.BasicReason.NOT_YET_VALID))));
        assertEquals(UpstreamCause.HOSTNAME_MISMATCH, cause(handshake(new CertificateException(
                "No subject alternative DNS name matching api.example.com found."))));
        assertEquals(UpstreamCause.HOSTNAME_MISMATCH, cause(handshake(new CertificateException(
                "No subject alternative names matching IP address 127.0.0.1 found"))));
        assertEquals(UpstreamCause.UNTRUSTED_CERTIFICATE, cause(handshake(new CertificateException(
                "PKIX path building failed", new CertPathBuilderException("unable to find valid certification path")))));
        assertEquals(UpstreamCause.UNTRUSTED_CERTIFICATE, cause(handshake(new CertPathValidatorException(
                "signature check failed"))));
        assertEquals(UpstreamCause.HANDSHAKE_FAILED, cause(new SSLHandshakeException("Received fatal alert:"
                + " handshake_failure")));
        assertEquals(UpstreamCause.TIMEOUT, cause(handshake(new SocketTimeoutException("Read timed out"))));
    }

    @Test
    void connectionCauses() {
        assertEquals(UpstreamCause.CONNECTION_REFUSED, cause(new ConnectException("Connection refused")));
        assertEquals(UpstreamCause.UNREACHABLE, cause(new ConnectException("Network is unreachable")));
        assertEquals(UpstreamCause.UNREACHABLE, cause(new NoRouteToHostException("No route to host")));
        assertEquals(UpstreamCause.TIMEOUT, cause(new SocketTimeoutException("Connect timed out")));
        assertEquals(UpstreamCause.CONNECTION_CLOSED, cause(new EOFException()));
        assertEquals(UpstreamCause.INVALID_RESPONSE, new UpstreamIOException(new IOException("x"), true).cause());
    }
}
