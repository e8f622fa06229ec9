package dev.openshell.supervisor.proxy;

import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test class whose tests share one {@link ProxyFixture}: started before the class's first test in a temporary
 * directory of the class, stopped after its last. Each test resets what it relies on
 * ({@link RecordingSteps#forwardUnchained}, {@link TestUpstream#reset}). Test classes run one after another (no
 * parallel execution is configured), so the one static field serves each subclass in turn.
 */
abstract class SharedProxy {
    @TempDir
    static Path tmp;
    static ProxyFixture fx;

    @BeforeAll
    static void startSharedProxy() throws Exception {
        fx = new ProxyFixture(tmp);
    }

    @AfterAll
    static void stopSharedProxy() throws Exception {
        fx.close();
    }
}
