package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ProxyRefusal;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.util.Locale;

/**
 * An I/O failure on the upstream side of an exchange (as opposed to the client side). One that happens after the
 * response head was read (a malformed chunked body, a body cut short, a compressed body that stops decoding) carries
 * a {@link #detail()} in the proxy's own words ({@link ResponseFailure} decides what the client gets).
 */
public final class UpstreamIOException extends IOException {
    private static final long serialVersionUID = 1L;
    private final boolean invalidResponse;
    /** The proxy's own words for what failed, or {@code null}: the cause's kind says it. */
    private final String detail;
    /** Whether the failure was already audited (an uninspectable body): it is not reported again. */
    private final boolean audited;

    /** @param cause the original failure */
    public UpstreamIOException(IOException cause) {
        this(cause, false);
    }

    /**
     * @param cause the original failure
     * @param invalidResponse whether the upstream's response was malformed (rather than the connection failing)
     */
    public UpstreamIOException(IOException cause, boolean invalidResponse) {
        this(cause, invalidResponse, null, false);
    }

    private UpstreamIOException(IOException cause, boolean invalidResponse, String detail, boolean audited) {
        super(cause.getClass().getSimpleName(), cause);
        this.invalidResponse = invalidResponse;
        this.detail = detail;
        this.audited = audited;
    }

    /**
     * {@return the failure of a response that breaks HTTP/1.1 after its head} (cause {@code invalid_response})
     *
     * @param detail the rule broken, in the proxy's words (a {@link FramingException}'s message): never the
     *     upstream's bytes
     */
    public static UpstreamIOException invalidResponse(String detail) {
        return new UpstreamIOException(new IOException(detail), true, detail, false);
    }

    /**
     * {@return the failure of an upstream that closed its connection inside its response} (cause
     * {@code connection_closed})
     *
     * @param where where the stream ended, in the proxy's words
     */
    public static UpstreamIOException ended(String where) {
        return new UpstreamIOException(new EOFException(where), false,
                "the upstream closed the connection before its response was complete (" + where + ")", false);
    }

    /**
     * {@return the failure of a body that could not be inspected to its end, already audited as uninspectable}: it
     * is not reported again (cause {@code invalid_response})
     *
     * @param cause the decoding failure
     * @param detail what failed, in the proxy's words
     */
    public static UpstreamIOException uninspectable(IOException cause, String detail) {
        return new UpstreamIOException(cause, true, detail, true);
    }

    /** {@return what failed in the proxy's own words, or {@code null} when the cause's kind says it} */
    public String detail() {
        return detail;
    }

    /** {@return whether the failure was audited already (the refusal is not reported again)} */
    public boolean audited() {
        return audited;
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
