package dev.openshell.supervisor.proxy.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * Client-side TLS towards upstreams: the JDK's default trust anchors (the system trust store) plus, optionally, every
 * certificate in an extra PEM file. Hostname verification ({@code HTTPS} endpoint identification) is always on.
 */
public final class UpstreamTls {
    private final SSLContext context;

    private UpstreamTls(SSLContext context) {
        this.context = context;
    }

    /** {@return the client context} */
    public SSLContext context() {
        return context;
    }

    /**
     * Builds the upstream trust.
     *
     * @param extraCaPem an optional PEM file with one or more extra trusted CA certificates
     * @return the upstream TLS settings
     * @throws IOException naming the file when it cannot be read or holds no certificate
     */
    public static UpstreamTls create(Optional<Path> extraCaPem) throws IOException {
        try {
            TrustManagerFactory system = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            system.init((KeyStore) null);
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (TrustManager tm : system.getTrustManagers()) {
                if (tm instanceof X509TrustManager x) {
                    for (X509Certificate c : x.getAcceptedIssuers()) {
                        ks.setCertificateEntry("system-" + i++, c);
                    }
                }
            }
            if (extraCaPem.isPresent()) {
                Path file = extraCaPem.get();
                Collection<? extends Certificate> extra;
                try (InputStream in = Files.newInputStream(file)) {
                    extra = CertificateFactory.getInstance("X.509").generateCertificates(in);
                } catch (CertificateException e) {
                    throw new IOException(file + ": not a readable PEM certificate file");
                }
                if (extra.isEmpty()) {
                    throw new IOException(file + ": no certificate found");
                }
                for (Certificate c : extra) {
                    ks.setCertificateEntry("extra-" + i++, c);
                }
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), null);
            return new UpstreamTls(ctx);
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot set up upstream TLS trust: " + e.getMessage(), e);
        }
    }
}
