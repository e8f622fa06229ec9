package dev.openshell.supervisor.runtime;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * A real supervisor for tests, in-process on 127.0.0.1: its files in one directory ({@code gateway.toml},
 * {@code state/}, {@code audit.jsonl}), a gateway that allows loopback upstreams and maps the test's host names to
 * 127.0.0.1, and a client that uses it as its proxy.
 */
final class LoopbackSupervisor {
    private LoopbackSupervisor() {
    }

    /**
     * Writes {@code dir/gateway.toml}: loopback upstreams allowed, each of {@code hosts} mapped to 127.0.0.1, then
     * {@code more} (e.g. plugin pins).
     *
     * @param dir the supervisor's directory
     * @param more TOML appended after the network tables, or empty
     * @param hosts the host names the test's policy names
     */
    static void writeGateway(Path dir, String more, String... hosts) throws IOException {
        StringBuilder toml = new StringBuilder("""
                [openshell.supervisor.network]
                allow_loopback_upstreams = true

                [openshell.supervisor.network.static_hosts]
                """);
        for (String host : hosts) {
            toml.append('"').append(host).append("\" = \"127.0.0.1\"\n");
        }
        Files.writeString(dir.resolve("gateway.toml"), toml + more);
    }

    /**
     * {@return a supervisor started with {@code policy} and {@code dir}'s gateway, on an ephemeral port of 127.0.0.1,
     * its audit log in {@code dir/audit.jsonl}, metrics off}
     *
     * @param dir the supervisor's directory, its gateway written ({@link #writeGateway})
     * @param policy the policy file
     * @param plugins the plugin directory, if any
     * @param watch how often the policy file is watched for changes, if at all
     */
    static Supervisor start(Path dir, Path policy, Optional<Path> plugins, Optional<Duration> watch) {
        return Supervisor.start(new Supervisor.Options(Optional.of(policy),
                Optional.of(dir.resolve("gateway.toml")), Optional.of("127.0.0.1:0"), plugins,
                Optional.of(dir.resolve("state")), Optional.of(audit(dir).toString()), Optional.of("off"), Map.of(),
                watch));
    }

    /** {@return the audit log of the supervisor started in {@code dir}} @param dir the supervisor's directory */
    static Path audit(Path dir) {
        return dir.resolve("audit.jsonl");
    }

    /** {@return an HTTP/1.1 client whose proxy is {@code supervisor}} @param supervisor a started supervisor */
    static HttpClient client(Supervisor supervisor) {
        return builder(supervisor).version(HttpClient.Version.HTTP_1_1).build();
    }

    /** {@return a client builder whose proxy is {@code supervisor}} @param supervisor a started supervisor */
    static HttpClient.Builder builder(Supervisor supervisor) {
        return HttpClient.newBuilder()
                .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", supervisor.port())))
                .connectTimeout(Duration.ofSeconds(5));
    }
}
