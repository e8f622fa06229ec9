package dev.openshell.supervisor.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * The one supervisor a test class shares: a {@link ProxyWorld} (loopback upstreams, policy, gateway, audit log) in a
 * temporary directory and the image's supervisor started in it with the regex stage, before the first test and
 * stopped after the last. A subclass's own {@code @AfterAll} runs first, while the supervisor still runs (to read its
 * audit log and output). Test classes run one after another, so the static fields belong to the running class.
 */
abstract class RunningWorld {
    @TempDir
    static Path tmp;
    static ProxyWorld world;
    static SupervisorProcess supervisor;
    private static final AtomicInteger BODIES = new AtomicInteger();

    @BeforeAll
    static void startWorld() throws Exception {
        world = ProxyWorld.create(tmp.resolve("world"));
        supervisor = world.start(true);
    }

    @AfterAll
    static void stopWorld() throws Exception {
        try {
            if (supervisor != null) {
                supervisor.close();
            }
        } finally {
            if (world != null) {
                world.close();
            }
            supervisor = null;
            world = null;
        }
    }

    /**
     * POSTs a body through the supervisor with real {@code curl}: over HTTP to the plain upstream, or over HTTPS
     * (intercepted, trusting the supervisor's CA) to the TLS one.
     *
     * @param tls whether to go over HTTPS
     * @param host the host name the world's policy routes ({@link ProxyWorld#DENY}, ...)
     * @param path the request path
     * @param body the body's bytes, sent as they are
     * @param contentType the {@code Content-Type}, or {@code null} to send none
     * @return curl's result
     */
    static Curl.Result post(boolean tls, String host, String path, byte[] body, String contentType) throws Exception {
        Path file = Files.write(tmp.resolve("body-" + BODIES.incrementAndGet() + ".bin"), body);
        List<String> args = new ArrayList<>(List.of("-H", "Content-Type:" + (contentType == null ? ""
                : " " + contentType), "--data-binary", "@" + file));
        if (tls) {
            args.addAll(0, List.of("--cacert", world.supervisorCa().toString()));
            args.add("https://" + host + ":" + world.tls.port() + path);
            return Curl.run(Map.of("HTTPS_PROXY", supervisor.proxyUrl()), args.toArray(String[]::new));
        }
        args.addAll(0, List.of("-x", supervisor.proxyUrl()));
        args.add("http://" + host + ":" + world.plain.port() + path);
        return Curl.run(args.toArray(String[]::new));
    }
}
