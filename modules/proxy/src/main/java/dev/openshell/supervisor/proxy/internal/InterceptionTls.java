package dev.openshell.supervisor.proxy.internal;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.time.Duration;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;

/**
 * Server-side TLS for intercepted CONNECT tunnels: one {@link SSLContext} per destination host holding a leaf
 * certificate from the {@link CertificateAuthority}, cached (at most {@value #MAX_CACHED_HOSTS} hosts, each for at
 * most 24 hours, well inside the leaf's 7-day validity). ALPN is pinned to {@code http/1.1} (RFC 0009: "The proxy's
 * TLS termination pins ALPN to http/1.1").
 */
public final class InterceptionTls {
    /** Most hosts whose leaf context is cached. */
    public static final int MAX_CACHED_HOSTS = 1024;
    private static final char[] NO_PASSWORD = new char[0];

    /** Creates the server context for one destination. */
    @FunctionalInterface
    interface ContextFactory {
        SSLContext create(Authority authority) throws GeneralSecurityException;
    }

    private final CertificateAuthority ca;
    private final ContextFactory factory;
    private final Cache<String, SSLContext> contexts = Caffeine.newBuilder()
            .maximumSize(MAX_CACHED_HOSTS)
            .expireAfterWrite(Duration.ofHours(24))
            .build();

    /** @param ca the signing CA */
    public InterceptionTls(CertificateAuthority ca) {
        this.ca = ca;
        this.factory = this::create;
    }

    /** For tests: contexts come from {@code factory}. */
    InterceptionTls(CertificateAuthority ca, ContextFactory factory) {
        this.ca = ca;
        this.factory = factory;
    }

    /** {@return the CA} */
    public CertificateAuthority ca() {
        return ca;
    }

    /**
     * Returns (creating and caching if needed) the server context for a destination.
     *
     * @param authority the CONNECT authority
     * @return the context
     * @throws GeneralSecurityException when the leaf cannot be issued or loaded
     */
    public SSLContext contextFor(Authority authority) throws GeneralSecurityException {
        SSLContext cached = contexts.getIfPresent(authority.host());
        if (cached != null) {
            return cached;
        }
        SSLContext created = factory.create(authority);
        contexts.put(authority.host(), created);
        return created;
    }

    /** {@return how many host contexts are cached} */
    public long cachedHosts() {
        contexts.cleanUp();
        return contexts.estimatedSize();
    }

    private SSLContext create(Authority authority) throws GeneralSecurityException {
        CertificateAuthority.LeafCertificate leaf = ca.issue(authority);
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try {
            ks.load(null, null);
        } catch (java.io.IOException e) {
            throw new GeneralSecurityException("cannot create an in-memory key store", e);
        }
        ks.setKeyEntry("leaf", leaf.key(), NO_PASSWORD, leaf.chain());
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, NO_PASSWORD);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(kmf.getKeyManagers(), null, null);
        return ctx;
    }

    /**
     * Creates a server engine that selects ALPN {@code http/1.1} when the client offers it and no ALPN otherwise.
     *
     * @param ctx the host's context
     * @return the engine, in server mode
     */
    public static SSLEngine serverEngine(SSLContext ctx) {
        SSLEngine engine = ctx.createSSLEngine();
        engine.setUseClientMode(false);
        SSLParameters p = engine.getSSLParameters();
        p.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
        engine.setSSLParameters(p);
        engine.setHandshakeApplicationProtocolSelector((e, offered) -> offered.contains("http/1.1") ? "http/1.1" : "");
        return engine;
    }

    /** {@return the protocols a client may negotiate} */
    public static List<String> alpn() {
        return List.of("http/1.1");
    }
}
