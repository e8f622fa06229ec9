package dev.openshell.supervisor.deploy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A command of the runtime image ({@code bin/supervisor ARGS}) run as a process whose standard output and error are
 * collected line by line, so a test can wait for a line (bounded) instead of sleeping. Stopped by {@link #close()}.
 */
final class ImageProcess implements AutoCloseable {
    private final Process process;
    private final List<String> lines = new ArrayList<>();

    private ImageProcess(Process process) {
        this.process = process;
        pump(process.getInputStream(), "out: ");
        pump(process.getErrorStream(), "err: ");
    }

    /**
     * Starts {@code bin/supervisor} of the image with the arguments and extra environment.
     *
     * @param image the runtime image directory
     * @param args its arguments
     * @param env variables added to this process's environment
     * @return the running process
     * @throws IOException when it cannot start
     */
    static ImageProcess start(String image, List<String> args, Map<String, String> env) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(image + "/bin/supervisor");
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Process p = pb.start();
        p.getOutputStream().close();
        return new ImageProcess(p);
    }

    private void pump(InputStream in, String prefix) {
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (lines) {
                        lines.add(prefix + line);
                        lines.notifyAll();
                    }
                }
            } catch (IOException e) {
                // the process ended
            } finally {
                synchronized (lines) {
                    lines.notifyAll();
                }
            }
        });
    }

    /**
     * Waits for a line (standard output lines start with {@code out: }, standard error's with {@code err: }).
     *
     * @param pattern what the line must contain (a regular expression, searched)
     * @param from the index of the first line to look at (lines before it were seen already)
     * @param timeout how long to wait at most
     * @return the match
     * @throws AssertionError when the process ends or the time runs out first, with everything it printed
     * @throws InterruptedException when interrupted
     */
    Matcher await(Pattern pattern, int from, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (lines) {
            int i = from;
            while (true) {
                for (; i < lines.size(); i++) {
                    Matcher m = pattern.matcher(lines.get(i));
                    if (m.find()) {
                        return m;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive()) {
                    throw new AssertionError("no line matching " + pattern + " (process "
                            + (process.isAlive() ? "running" : "exited " + process.exitValue()) + "):\n"
                            + String.join("\n", lines));
                }
                lines.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 1000)));
            }
        }
    }

    /** {@return the number of lines seen so far} */
    int lineCount() {
        synchronized (lines) {
            return lines.size();
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
