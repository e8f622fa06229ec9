package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ProxyRefusal;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Optional;
import java.util.zip.ZipException;

/**
 * The one home of the rule for an exchange that fails on the upstream's side, whenever it fails: before the response
 * head is read (connect, TLS, a timeout, a malformed head) or after it (a chunked body that breaks its framing, a body
 * cut short by the upstream's close, a compressed body that stops decoding, a read timeout inside the body), over
 * plain HTTP and inside an intercepted CONNECT, relayed as is, scrubbed or through response stages.
 *
 * <ul>
 *   <li>While no byte of the response has been committed to the client ({@link ClientStream#isResponseStarted}),
 *       the client gets {@code 502} (or {@code 504} for a timeout) with the usual JSON error body naming the rule
 *       broken in the proxy's own words ({@link #refusal}), never the upstream's bytes; a scrubbed body is read and
 *       checked before its head goes, so a malformed scrubbed body is always answered so when its first chunk is
 *       bad.</li>
 *   <li>Once part of the response has been committed, the only honest signal is to close the connection: the
 *       relay stops where the failure is found, so a chunked response never gets its terminating {@code 0} chunk and
 *       a Content-Length response stays short, and the client cannot take the response for complete
 *       ({@link #cutOff}).</li>
 *   <li>Either way the refusal is audited exactly once ({@link ProxyRefusal.Kind#UPSTREAM}, cause
 *       {@code invalid_response}, {@code connection_closed} or {@code timeout}; status 0 when the connection was
 *       closed unanswered), except a body already audited as uninspectable ({@link UpstreamIOException#audited}).</li>
 * </ul>
 */
final class ResponseFailure {
    private ResponseFailure() {
    }

    /**
     * {@return the answer to an upstream failure, with its real cause}: 504 for a timeout; 502
     * {@code upstream_tls_failed} naming what failed in TLS (an untrusted CA, a certificate for another host, an
     * expired certificate, the handshake itself); 502 {@code invalid_upstream_response} for a response that breaks
     * HTTP/1.1 after its head, with the rule broken; 502 {@code upstream_failed} for a refused, unreachable or broken
     * connection (one closed inside the response says so)
     */
    static Refusal refusal(UpstreamIOException e) {
        ProxyRefusal.UpstreamCause cause = e.cause();
        Optional<String> code = Optional.of(cause.code());
        return switch (cause) {
            case TIMEOUT -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 504, "upstream_timeout", code,
                    "the upstream did not answer in time");
            case UNTRUSTED_CERTIFICATE -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "upstream_tls_failed", code,
                    "TLS with the upstream failed: its certificate is not issued by a trusted CA (a private CA goes"
                            + " in the gateway's upstream_ca_bundle)");
            case HOSTNAME_MISMATCH -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "upstream_tls_failed", code,
                    "TLS with the upstream failed: its certificate does not name the requested host");
            case CERTIFICATE_EXPIRED -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "upstream_tls_failed", code,
                    "TLS with the upstream failed: its certificate has expired or is not yet valid");
            case HANDSHAKE_FAILED -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "upstream_tls_failed", code,
                    "TLS with the upstream failed: the handshake failed (protocol version, cipher suites, or an"
                            + " alert from the upstream)");
            case CONNECTION_REFUSED -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "upstream_failed", code,
                    "the upstream refused the connection");
            case UNREACHABLE -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "upstream_failed", code,
                    "the upstream is unreachable");
            case INVALID_RESPONSE -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "invalid_upstream_response", code,
                    e.detail() != null ? e.detail() : "the upstream sent a malformed response");
            case CONNECTION_CLOSED -> new Refusal(ProxyRefusal.Kind.UPSTREAM, 502, "upstream_failed", code,
                    e.detail() != null ? e.detail() : "the upstream connection failed");
        };
    }

    /**
     * {@return the report of a refusal that could not be answered because part of the response was committed}: the
     * same kind, code and cause, status 0 (closed unanswered), and a detail that says the response was cut off
     */
    static Refusal cutOff(Refusal r) {
        return new Refusal(r.kind(), 0, r.error(), r.cause(), "the response was cut off and the connection closed"
                + " (part of it had reached the client): " + r.detail());
    }

    /**
     * {@return one read of a scrubbed body's decoded bytes} A decoder that stops (a {@link ZipException}, or its own
     * {@link EOFException}: the framed body's early end is an {@link UpstreamIOException} already) is audited as
     * {@value ScrubbingRelay#UNINSPECTABLE} and surfaces as an {@link UpstreamIOException#uninspectable}, which the
     * session does not report again.
     *
     * @param body the decoded body
     * @param buf where the bytes go
     * @param scrub the response's scrub, told of the uninspectable body
     */
    static int readDecoded(InputStream body, byte[] buf, ResponseScrub scrub) throws IOException {
        try {
            return body.read(buf);
        } catch (ZipException | EOFException e) {
            scrub.uninspectable(ScrubbingRelay.UNINSPECTABLE, false);
            ProxyCore.LOG.log(System.Logger.Level.DEBUG, "a compressed response body stopped decoding; closing");
            throw UpstreamIOException.uninspectable(e, "the upstream's compressed response body stopped decoding");
        }
    }
}
