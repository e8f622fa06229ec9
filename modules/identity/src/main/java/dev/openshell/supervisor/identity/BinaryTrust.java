package dev.openshell.supervisor.identity;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Trust on first use for binaries (OpenShell's integrity check): the SHA-256 of the executable first seen at a path
 * is trusted for the life of this store; a later executable at the same path with another hash is a violation.
 *
 * <p>The hash is computed from the running image ({@code /proc/<pid>/exe}), never from the path, so a file replaced
 * under a running process cannot hide. It is cached per path with the file's size, mtime, ctime, device and inode,
 * and recomputed only when one of them changes. A hash found to differ is remembered the same way, so a replaced
 * binary costs one hash, not one per connection. Thread-safe; one path is hashed by one thread at a time.
 */
final class BinaryTrust {
    /** The file facts whose change forces a new hash. */
    record FileKey(long size, long mtimeNanos, long ctimeNanos, long dev, long ino) {
        static FileKey of(Path p) throws IOException {
            Map<String, Object> a = Files.readAttributes(p, "unix:size,lastModifiedTime,ctime,dev,ino");
            return new FileKey((Long) a.get("size"), nanos(a.get("lastModifiedTime")), nanos(a.get("ctime")),
                    (Long) a.get("dev"), (Long) a.get("ino"));
        }

        private static long nanos(Object t) {
            return ((FileTime) t).to(TimeUnit.NANOSECONDS);
        }
    }

    /** What is known of one path: the trusted hash, and the last file seen there. */
    private record Entry(String trusted, FileKey key, String hash) {
    }

    /** The result of a check: the hash, and whether it is the trusted one. */
    record Verdict(String sha256, boolean trusted, String trustedSha256) {
    }

    /** Thrown when a path cannot be trusted for a reason other than a changed hash. */
    static final class Refused extends IOException {
        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    private final Map<String, Entry> entries = new ConcurrentHashMap<>();
    /** Striped locks: one path is hashed by one thread at a time, without a lock object per path. */
    private final ReentrantLock[] locks = new ReentrantLock[64];
    private final int maxPaths;
    private final long maxBytes;
    private final AtomicLong hashes = new AtomicLong();

    BinaryTrust(int maxPaths, long maxBytes) {
        this.maxPaths = maxPaths;
        this.maxBytes = maxBytes;
        for (int i = 0; i < locks.length; i++) {
            locks[i] = new ReentrantLock();
        }
    }

    /**
     * Checks the executable running at {@code exeLink}, shown as {@code path}.
     *
     * @param path the display path ({@link ProcTree#exe})
     * @param exeLink {@code /proc/<pid>/exe}
     * @return the verdict
     * @throws IOException if the executable cannot be read (the process vanished), or {@link Refused}
     */
    Verdict check(String path, Path exeLink) throws IOException {
        FileKey key = FileKey.of(exeLink);
        Entry e = entries.get(path);
        if (e != null && e.key().equals(key)) {
            return new Verdict(e.hash(), e.hash().equals(e.trusted()), e.trusted());
        }
        ReentrantLock lock = locks[Math.floorMod(path.hashCode(), locks.length)];
        lock.lock();
        try {
            e = entries.get(path);
            if (e != null && e.key().equals(key)) {
                return new Verdict(e.hash(), e.hash().equals(e.trusted()), e.trusted());
            }
            if (e == null && entries.size() >= maxPaths) {
                throw new Refused("the binary trust store is full (" + maxPaths + " paths)");
            }
            if (key.size() > maxBytes) {
                throw new Refused("the binary is larger than " + maxBytes + " bytes and is not hashed");
            }
            String hash = sha256(exeLink);
            String trusted = e == null ? hash : e.trusted();
            entries.put(path, new Entry(trusted, key, hash));
            return new Verdict(hash, hash.equals(trusted), trusted);
        } finally {
            lock.unlock();
        }
    }

    /** {@return how many hashes were computed (for the benchmark and tests)} */
    long hashesComputed() {
        return hashes.get();
    }

    /** {@return how many paths are remembered} */
    int size() {
        return entries.size();
    }

    private String sha256(Path p) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is mandatory in every JDK", e);
        }
        byte[] buf = new byte[64 * 1024];
        long total = 0;
        try (InputStream in = Files.newInputStream(p)) {
            for (int n = in.read(buf); n > 0; n = in.read(buf)) {
                total += n;
                if (total > maxBytes) {
                    throw new Refused("the binary is larger than " + maxBytes + " bytes and is not hashed");
                }
                md.update(buf, 0, n);
            }
        }
        hashes.incrementAndGet();
        return HexFormat.of().formatHex(md.digest());
    }
}
