package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code bin/supervisor run} as a long-running process, the way an operator runs it: no JDK on the PATH, output read
 * line by line as it comes. {@link #close()} sends SIGTERM and waits for a clean stop (bounded).
 */
final class ImageProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("supervisor listening on [^ ]+:(\\d+)");

    private final Process process;
    private final List<String> out = new ArrayList<>();
    private final List<String> err = new ArrayList<>();
    private final int port;

    private ImageProcess(Process process) throws InterruptedException {
        this.process = process;
        Thread.ofVirtual().start(() -> pump(process.getInputStream(), out));
        Thread.ofVirtual().start(() -> pump(process.getErrorStream(), err));
        String line = awaitLine(out, l -> LISTENING.matcher(l).find(), 60);
        Matcher m = LISTENING.matcher(line);
        assertTrue(m.find());
        this.port = Integer.parseInt(m.group(1));
    }

    /**
     * Starts {@code HOME/bin/supervisor run ARGS} and waits (at most 60 s) for its "listening" line.
     *
     * @throws AssertionError when it exits or does not get ready in time
     */
    static ImageProcess run(Path home, String... args) throws IOException, InterruptedException {
        return start(List.of(), home, args);
    }

    /**
     * Like {@link #run}, with SIGHUP ignored in the started process, as {@code nohup} leaves it.
     */
    static ImageProcess runIgnoringHangup(Path home, String... args) throws IOException, InterruptedException {
        return start(List.of("/bin/sh", "-c", "trap '' HUP; exec \"$0\" \"$@\""), home, args);
    }

    private static ImageProcess start(List<String> prefix, Path home, String... args)
            throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(Image.launcher(home).toString());
        cmd.add("run");
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        Map<String, String> env = pb.environment();
        env.remove("JAVA_HOME");
        env.put("PATH", "/usr/bin:/bin");
        return new ImageProcess(pb.start());
    }

    private static void pump(InputStream in, List<String> sink) {
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                synchronized (sink) {
                    sink.add(line);
                    sink.notifyAll();
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }

    private String awaitLine(List<String> sink, Predicate<String> wanted, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        synchronized (sink) {
            int seen = 0;
            while (true) {
                for (; seen < sink.size(); seen++) {
                    if (wanted.test(sink.get(seen))) {
                        return sink.get(seen);
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || (!process.isAlive() && seen == sink.size())) {
                    throw new AssertionError("no such line within " + seconds + " s (alive: " + process.isAlive()
                            + ")\n--- stdout\n" + String.join("\n", out) + "\n--- stderr\n" + errText());
                }
                sink.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(left, TimeUnit.SECONDS.toNanos(1)))));
            }
        }
    }

    /**
     * Waits (at most 60 s) for the {@code n}th standard-error line, counting from 1, that contains {@code text}.
     *
     * @return that line
     */
    String awaitLog(String text, int n) throws InterruptedException {
        int[] count = {0};
        return awaitLine(err, l -> l.contains(text) && ++count[0] == n, 60);
    }

    /** {@return how many standard-error lines so far contain {@code text}} */
    long logCount(String text) {
        synchronized (err) {
            return err.stream().filter(l -> l.contains(text)).count();
        }
    }

    String errText() {
        synchronized (err) {
            return String.join("\n", err);
        }
    }

    int port() {
        return port;
    }

    /** Sends a signal ({@code HUP}, {@code TERM}) with the system's {@code kill}. */
    void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + name + " failed");
    }

    boolean alive() {
        return process.isAlive();
    }

    /** SIGTERM, then at most 30 s for a clean stop; forcibly after that. */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Copies a directory tree (a copy of the image, for example), keeping file modes. */
    static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }
}
