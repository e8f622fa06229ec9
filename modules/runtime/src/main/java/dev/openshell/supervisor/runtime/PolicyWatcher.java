package dev.openshell.supervisor.runtime;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;

/**
 * Watches the directory of the policy file ({@link WatchService}), and the directory of its target when it is a link
 * into another one, and calls back when the file may have changed: an event naming the file (or the link's target), an event naming an entry that starts with {@code ..} (a Kubernetes ConfigMap volume swaps its
 * {@code ..data} link rather than writing the file), or an overflow. The callback decides whether the content really
 * changed; it runs on the watcher thread and must return quickly (it schedules a debounced reload).
 */
final class PolicyWatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PolicyWatcher.class.getName());

    private final WatchService service;
    private final Thread thread;

    private PolicyWatcher(WatchService service, Thread thread) {
        this.service = service;
        this.thread = thread;
    }

    /**
     * Starts watching.
     *
     * @param policyFile the policy file
     * @param onChange called on the watcher thread when the file may have changed
     * @return the running watcher
     * @throws IOException when the directory cannot be watched
     */
    static PolicyWatcher start(Path policyFile, Runnable onChange) throws IOException {
        Objects.requireNonNull(onChange, "onChange");
        Path file = policyFile.toAbsolutePath().normalize();
        Set<Path> names = new HashSet<>();
        names.add(file.getFileName());
        WatchService ws = file.getFileSystem().newWatchService();
        int directories = 1;
        try {
            register(ws, file.getParent());
            // a policy file that is a link into another directory changes there
            Path real = file.toRealPath();
            if (!real.getParent().equals(file.getParent())) {
                register(ws, real.getParent());
                names.add(real.getFileName());
                directories++;
            }
        } catch (IOException | RuntimeException e) {
            ws.close();
            throw e;
        }
        Set<Path> watched = Set.copyOf(names);
        int count = directories;
        Thread t = new Thread(() -> loop(ws, watched, count, onChange), "supervisor-policy-watch");
        t.setDaemon(true);
        t.start();
        return new PolicyWatcher(ws, t);
    }

    private static void register(WatchService ws, Path dir) throws IOException {
        dir.register(ws, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                StandardWatchEventKinds.ENTRY_DELETE);
    }

    private static void loop(WatchService ws, Set<Path> names, int directories, Runnable onChange) {
        int live = directories;
        try {
            while (true) {
                WatchKey key = ws.take();
                boolean relevant = false;
                for (WatchEvent<?> e : key.pollEvents()) {
                    if (e.kind() == StandardWatchEventKinds.OVERFLOW) {
                        relevant = true;
                    } else if (e.context() instanceof Path p
                            && (names.contains(p) || p.getFileName().toString().startsWith(".."))) {
                        relevant = true;
                    }
                }
                if (!key.reset() && --live == 0) {
                    LOG.log(System.Logger.Level.WARNING, "the policy file''s directory can no longer be watched; "
                            + "reload with SIGHUP");
                    return;
                }
                if (relevant) {
                    onChange.run();
                }
            }
        } catch (InterruptedException | ClosedWatchServiceException e) {
            // closed
        }
    }

    /** Stops watching. */
    @Override
    public void close() {
        try {
            service.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing the policy watch service failed", e);
        }
        thread.interrupt();
    }
}
