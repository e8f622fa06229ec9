package dev.openshell.supervisor.it;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;

/**
 * The upstream side shared by image tests whose upstreams run on 127.0.0.1 over plain HTTP and TLS: a test CA and a
 * leaf for the test host (written under {@code work/pki}), and the opening of the gateway configuration that lets the
 * supervisor reach them (loopback upstreams allowed, the hosts pinned to 127.0.0.1, the CA as the upstream bundle);
 * and the set-up and tear-down around them ({@link #start}, {@link #closeAll}).
 *
 * @param ca the upstream CA
 * @param leaf the upstream servers' certificate, for the first of {@code hosts}
 * @param hosts the test host names pinned to 127.0.0.1, the leaf's first
 */
record LoopbackUpstreams(TestPki.Issued ca, TestPki.Issued leaf, List<String> hosts) {

    /**
     * {@return a CA and a leaf for {@code host}, written under {@code work/pki}}
     *
     * @param more further host names pinned to 127.0.0.1 (served over plain HTTP: the leaf names {@code host} only)
     */
    static LoopbackUpstreams create(Path work, String host, String... more) throws Exception {
        Path pki = Files.createDirectories(work.resolve("pki"));
        TestPki.Issued ca = TestPki.ca(pki, "upstream-ca");
        return new LoopbackUpstreams(ca, TestPki.leaf(pki, "upstream", ca, host),
                Stream.concat(Stream.of(host), Stream.of(more)).toList());
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
                %s

                [openshell.supervisor.tls]
                upstream_ca_bundle = "%s"

                """.formatted(hosts.stream().map(h -> "\"" + h + "\" = \"127.0.0.1\"").collect(Collectors.joining("\n")),
                ca.certFile().toAbsolutePath());
    }

    /**
     * {@return {@code supervisor run} from the image, started under {@code work/supervisor}} with
     * {@code work/gateway.toml} ({@link #gatewayToml} then {@code gatewayTables}) and {@code work/policy.yaml}
     *
     * @param gatewayTables the test's own gateway tables (its credentials)
     * @param policy the sandbox policy
     * @param environment the credential sources
     */
    StackProcess start(Path work, String gatewayTables, String policy, Map<String, String> environment)
            throws IOException, InterruptedException {
        Path gateway = Files.writeString(work.resolve("gateway.toml"), gatewayToml() + gatewayTables);
        Path policyFile = Files.writeString(work.resolve("policy.yaml"), policy);
        return StackProcess.start(work.resolve("supervisor"), policyFile, gateway, environment);
    }

    /** {@return the CA certificate of the supervisor {@link #start} started under {@code work}} */
    static Path supervisorCa(Path work) {
        return work.resolve("supervisor").resolve("state").resolve("ca").resolve("supervisor-ca.pem");
    }

    /** Closes each of {@code all} that is not {@code null}, going on past failures (a test class's tear-down). */
    static void closeAll(AutoCloseable... all) {
        for (AutoCloseable c : all) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // keep closing the rest
            }
        }
    }
}
