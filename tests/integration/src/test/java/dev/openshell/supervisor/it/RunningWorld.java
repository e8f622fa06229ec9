package dev.openshell.supervisor.it;

import java.nio.file.Path;
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
}
