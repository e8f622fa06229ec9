package dev.openshell.supervisor.it;

import java.nio.file.Files;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;

/**
 * The upstream side shared by image tests whose upstreams run on 127.0.0.1 over plain HTTP and TLS: a test CA and a
 * leaf for the test host (written under {@code work/pki}), and the opening of the gateway configuration that lets the
 * supervisor reach them (loopback upstreams allowed, the host pinned to 127.0.0.1, the CA as the upstream bundle).
 *
 * @param ca the upstream CA
 * @param leaf the upstream servers' certificate, for {@code host}
 * @param host the test host name
 */
record LoopbackUpstreams(TestPki.Issued ca, TestPki.Issued leaf, String host) {

    /** {@return a CA and a leaf for {@code host}, written under {@code work/pki}} */
    static LoopbackUpstreams create(Path work, String host) throws Exception {
        Path pki = Files.createDirectories(work.resolve("pki"));
        TestPki.Issued ca = TestPki.ca(pki, "upstream-ca");
        return new LoopbackUpstreams(ca, TestPki.leaf(pki, "upstream", ca, host), host);
    }

    /** {@return the TLS context of an upstream server presenting the leaf} */
    SSLContext serverContext() throws Exception {
        return ProxyWorld.serverContext(leaf);
    }

    /** {@return the gateway configuration's network and TLS tables, ending in a blank line; a test appends its own} */
    String gatewayToml() {
        return """
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                "%s" = "127.0.0.1"

                [openshell.supervisor.tls]
                upstream_ca_bundle = "%s"

                """.formatted(host, ca.certFile().toAbsolutePath());
    }
}
