package dev.openshell.supervisor.engine;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The plugins the operator chose: entries of the plugins directory pinned by the SHA-256 of their bytes (gateway
 * {@code [[openshell.supervisor.plugin_pins]]}). An in-process plugin runs with the supervisor's privileges, so only
 * a pinned entry whose bytes still have the pinned digest is loaded; built-ins are part of the image and need no pin.
 *
 * <h2>Digest</h2>
 * <ul>
 *   <li>a {@code .jar} file: the SHA-256 of the file;</li>
 *   <li>a directory: the SHA-256 of, for every regular file below it in the order of its relative path
 *       ({@code /}-separated, UTF-8, compared as strings), the path, a NUL byte and the file's own 32-byte SHA-256.
 *       Any added, removed, renamed or changed file changes it; a symbolic link inside the directory is refused.</li>
 * </ul>
 *
 * <h2>What loads is what was checked</h2>
 * {@link #stage} reads each file once, digests those bytes and writes them to a private staging directory (mode
 * 0700), from which the plugin's module layer is defined. A file swapped in the plugins directory after the check is
 * never loaded. The staging directory and everything in it are deleted when the supervisor's JVM exits (a shutdown
 * hook; a module layer reads its JAR for as long as the process runs, so the copies stay until then).
 */
public final class PluginPins {
    private final Map<String, String> pins;
    private final boolean required;
    private Path stagingRoot;

    private PluginPins(Map<String, String> pins, boolean required) {
        this.pins = Map.copyOf(pins);
        this.required = required;
    }

    /**
     * {@return pins that admit exactly the given entries}
     *
     * @param entryToSha256 entry name in the plugins directory to its digest (64 lowercase hex digits)
     */
    public static PluginPins of(Map<String, String> entryToSha256) {
        return new PluginPins(Objects.requireNonNull(entryToSha256, "entryToSha256"), true);
    }

    /** {@return pins that admit no plugin at all (the default: a plugin loads only when pinned)} */
    public static PluginPins none() {
        return new PluginPins(Map.of(), true);
    }

    /**
     * {@return pins that admit every entry unchecked}: for tests of other plugin rules, and for listing what a
     * directory holds; never what the running supervisor uses.
     */
    public static PluginPins unchecked() {
        return new PluginPins(Map.of(), false);
    }

    /**
     * The result of checking one entry.
     *
     * @param staged the checked copy to load from, when admitted
     * @param refusal why the entry is refused, when not admitted
     * @param sha256 the entry's digest as read (empty when it could not be read)
     */
    public record Check(Optional<Path> staged, Optional<String> refusal, Optional<String> sha256) {
    }

    /**
     * Checks an entry against its pin and, when it matches, stages the checked bytes.
     *
     * @param entry a {@code .jar} file or a directory in the plugins directory
     * @return the staged copy, or why it is refused; never throws for a bad entry
     */
    public synchronized Check stage(Path entry) {
        String name = entry.getFileName().toString();
        String pinned = pins.get(name);
        if (required && pinned == null) {
            return refused("not pinned: only plugins the operator pinned load; if you trust it, add the entry that"
                    + " `supervisor plugins --pin` prints to [[openshell.supervisor.plugin_pins]] in the gateway"
                    + " configuration", Optional.empty());
        }
        try {
            Path target = stagingRoot().resolve(name);
            String actual = Files.isDirectory(entry)
                    ? copyDirectory(entry, target) : copyFile(entry, target);
            if (required && !actual.equals(pinned)) {
                return refused("changed since it was pinned: its sha256 is " + actual + ", the pin says " + pinned,
                        Optional.of(actual));
            }
            return new Check(Optional.of(target), Optional.empty(), Optional.of(actual));
        } catch (IOException | RuntimeException e) {
            return refused("cannot read the plugin to check its pin: " + PluginHost.safe(e), Optional.empty());
        }
    }

    private static Check refused(String why, Optional<String> sha) {
        return new Check(Optional.empty(), Optional.of(why), sha);
    }

    /**
     * {@return the digest of an entry, as a pin states it} See the class description.
     *
     * @param entry a {@code .jar} file or a directory
     * @throws IOException when it cannot be read, or a directory holds a symbolic link
     */
    public static String digest(Path entry) throws IOException {
        if (!Files.isDirectory(entry)) {
            return HexFormat.of().formatHex(sha256().digest(Files.readAllBytes(entry)));
        }
        MessageDigest outer = sha256();
        for (Path file : files(entry)) {
            outer.update(relative(entry, file).getBytes(StandardCharsets.UTF_8));
            outer.update((byte) 0);
            outer.update(sha256().digest(Files.readAllBytes(file)));
        }
        return HexFormat.of().formatHex(outer.digest());
    }

    private static String copyFile(Path from, Path to) throws IOException {
        byte[] bytes = Files.readAllBytes(from);
        Files.write(to, bytes);
        return HexFormat.of().formatHex(sha256().digest(bytes));
    }

    private static String copyDirectory(Path from, Path to) throws IOException {
        MessageDigest outer = sha256();
        Files.createDirectories(to);
        for (Path file : files(from)) {
            String rel = relative(from, file);
            byte[] bytes = Files.readAllBytes(file);
            Path target = to.resolve(rel);
            Files.createDirectories(target.getParent());
            Files.write(target, bytes);
            outer.update(rel.getBytes(StandardCharsets.UTF_8));
            outer.update((byte) 0);
            outer.update(sha256().digest(bytes));
        }
        return HexFormat.of().formatHex(outer.digest());
    }

    private static List<Path> files(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.toList()) {
                if (Files.isSymbolicLink(p)) {
                    throw new IOException("the plugin directory holds a symbolic link: " + relative(dir, p));
                }
                if (Files.isRegularFile(p)) {
                    out.add(p);
                }
            }
        }
        out.sort((a, b) -> relative(dir, a).compareTo(relative(dir, b)));
        return out;
    }

    private static String relative(Path dir, Path file) {
        return dir.relativize(file).toString().replace(File.separatorChar, '/');
    }

    private Path stagingRoot() throws IOException {
        if (stagingRoot == null) {
            Path root;
            try {
                root = Files.createTempDirectory("supervisor-plugins-",
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (UnsupportedOperationException e) {
                root = Files.createTempDirectory("supervisor-plugins-");
            }
            Path staged = root;
            Runtime.getRuntime().addShutdownHook(
                    Thread.ofPlatform().name("plugin-staging-cleanup").unstarted(() -> deleteTree(staged)));
            stagingRoot = root;
        }
        return stagingRoot;
    }

    /**
     * Deletes a staging directory and everything below it, deepest entries first; what cannot be deleted is left
     * (the process is exiting, nothing is reported).
     *
     * @param root the staging directory
     */
    static void deleteTree(Path root) {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | RuntimeException e) {
            // best effort at exit
        }
    }

    /** {@return the staging directory, when anything was staged} For tests of the clean-up. */
    Optional<Path> stagingDirectory() {
        return Optional.ofNullable(stagingRoot);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from the Java runtime", e);
        }
    }
}
