package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ProxyRefusal;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;

/** An I/O failure on the upstream side of an exchange (as opposed to the client side). */
public final class UpstreamIOException extends IOException {
    private static final long serialVersionUID = 1L;
    private final boolean invalidResponse;

    /** @param cause the original failure */
    public UpstreamIOException(IOException cause) {
        this(cause, false);
    }

    /**
     * @param cause the original failure
     * @param invalidResponse whether the upstream's response was malformed (rather than the connection failing)
     */
    public UpstreamIOException(IOException cause, boolean invalidResponse) {
        super(cause.getClass().getSimpleName(), cause);
        this.invalidResponse = invalidResponse;
    }

    /** {@return whether the failure was in TLS (for example the upstream certificate did not verify)} */
    public boolean isTls() {
        return getCause() instanceof javax.net.ssl.SSLException;
    }

    /**
     * {@return what failed, from the JDK's exception chain}: a certificate that expired or is not yet valid
     * ({@link CertificateExpiredException}, {@link CertificateNotYetValidException}, or a
     * {@link CertPathValidatorException} with that reason); a certificate for another host (the
     * {@code CertificateException} of HTTPS endpoint identification, RFC 9110 section 4.3.4: "No subject alternative
     * ... matching", "No name matching"); no path to a trusted CA ({@link CertPathBuilderException}, or any other
     * validation failure); any other TLS failure is the handshake; a timeout, a refused or unreachable connection,
     * else a closed one
     */
    public ProxyRefusal.UpstreamCause cause() {
        if (invalidResponse) {
            return ProxyRefusal.UpstreamCause.INVALID_RESPONSE;
        }
        boolean tls = false;
        boolean untrusted = false;
        for (Throwable t = getCause(); t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof CertificateExpiredException || t instanceof CertificateNotYetValidException
                    || t instanceof CertPathValidatorException v
                    && (v.getReason() == CertPathValidatorException.BasicReason.EXPIRED
                    || v.getReason() == CertPathValidatorException.BasicReason.NOT_YET_VALID)) {
                return ProxyRefusal.UpstreamCause.CERTIFICATE_EXPIRED;
            }
            String m = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
            if (t instanceof java.security.cert.CertificateException
                    && (m.startsWith("no subject alternative") || m.startsWith("no name matching"))) {
                return ProxyRefusal.UpstreamCause.HOSTNAME_MISMATCH;
            }
            if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException
                    || m.contains("pkix path")) {
                untrusted = true;
            }
            if (t instanceof javax.net.ssl.SSLException) {
                tls = true;
            }
            if (!tls && t instanceof SocketTimeoutException) {
                return ProxyRefusal.UpstreamCause.TIMEOUT;
            }
            if (!tls && t instanceof NoRouteToHostException) {
                return ProxyRefusal.UpstreamCause.UNREACHABLE;
            }
            if (!tls && t instanceof ConnectException) {
                return m.contains("unreachable") ? ProxyRefusal.UpstreamCause.UNREACHABLE
                        : ProxyRefusal.UpstreamCause.CONNECTION_REFUSED;
            }
        }
        if (untrusted) {
            return ProxyRefusal.UpstreamCause.UNTRUSTED_CERTIFICATE;
        }
        if (tls) {
            return getCause() instanceof javax.net.ssl.SSLException s && isTimeoutInside(s)
                    ? ProxyRefusal.UpstreamCause.TIMEOUT : ProxyRefusal.UpstreamCause.HANDSHAKE_FAILED;
        }
        return ProxyRefusal.UpstreamCause.CONNECTION_CLOSED;
    }

    private static boolean isTimeoutInside(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }
}
