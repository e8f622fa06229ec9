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
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

/**
 * Client-side TLS towards upstreams: the JDK's default trust anchors (the system trust store) plus, optionally, every
 * certificate in an extra PEM file. Hostname verification ({@code HTTPS} endpoint identification) is always on.
 */
public final class UpstreamTls {
    /**
     * The system trust store's certificates, read once per process: by {@link #preload()} on a thread of its own at
     * start-up, or by the first {@link #create} (reading and parsing the JDK's trust store is a tenth of a second of
     * a cold start).
     */
    private static final FutureTask<List<X509Certificate>> SYSTEM = new FutureTask<>(UpstreamTls::systemAnchors);

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
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            int i = 0;
            for (X509Certificate c : system()) {
                ks.setCertificateEntry("system-" + i++, c);
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

    /**
     * Starts reading the system trust store on the calling thread, unless that has begun already; {@link #create}
     * then waits for it instead of reading it again. Never throws: a failure is {@link #create}'s to report.
     */
    public static void preload() {
        SYSTEM.run();
    }

    /** {@return the system trust store's certificates}, read now or waited for when another thread is reading them */
    private static List<X509Certificate> system() throws IOException, GeneralSecurityException {
        SYSTEM.run(); // returns at once when another thread runs it (or ran it): get() then waits for its result
        try {
            return SYSTEM.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while reading the system trust store", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof GeneralSecurityException g) {
                throw g;
            }
            throw new IOException("cannot read the system trust store: " + e.getCause(), e.getCause());
        }
    }

    private static List<X509Certificate> systemAnchors() throws GeneralSecurityException {
        TrustManagerFactory system = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        system.init((KeyStore) null);
        List<X509Certificate> all = new ArrayList<>();
        for (TrustManager tm : system.getTrustManagers()) {
            if (tm instanceof X509TrustManager x) {
                all.addAll(List.of(x.getAcceptedIssuers()));
            }
        }
        return List.copyOf(all);
    }
}
