package dev.openshell.supervisor.identity;

import dev.openshell.supervisor.identity.Identification.Cause;
import dev.openshell.supervisor.identity.Identification.Identified;
import dev.openshell.supervisor.identity.Identification.IntegrityViolation;
import dev.openshell.supervisor.identity.Identification.Unidentified;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Finds the process behind a TCP connection accepted by the proxy, on Linux, through {@code /proc} (OpenShell's
 * identity binding, {@code openshell-l7-semantics.md} section 4). Works for clients on the same host or in the same
 * network namespace as the configured entrypoint; anything else is {@link Cause#NO_SOCKET}.
 *
 * <p>Steps, per call:
 * <ol>
 *   <li>the client socket's inode: the row of {@code net/tcp} or {@code net/tcp6} whose local end is the client's
 *       address and whose remote end is the proxy's (IPv4-mapped IPv6 equal to IPv4), in the entrypoint's namespace
 *       ({@code /proc/<entrypoint>/net}) when one is configured, else in the supervisor's ({@code /proc/net}); an
 *       IPv4 client is looked up in {@code net/tcp} first, and in {@code net/tcp6} only when not there (each read
 *       costs the kernel a walk of its whole established-socket hash, about 5 ms of CPU on a 24 GiB host);</li>
 *   <li>its owners: every process with a descriptor linking to {@code socket:[inode]}, searched among the entrypoint
 *       and its descendants first (breadth first, through {@code task/<tid>/children}, or through every process's
 *       {@code PPid} on kernels without them) and, only when none holds it there, among every process under the root
 *       except the excluded ones. That full search records the holders of every socket it sees, and answers later
 *       lookups too: one whose socket it saw takes its holders from it for {@value #OWNER_SEARCH_REUSE_MILLIS} ms
 *       after it started (not when it saw more than {@value #OWNER_SEARCH_REUSE_MAX_SOCKETS} sockets). Such holders
 *       are verified like any (next step), and when none of them is still identified by it (each closed the socket,
 *       exited, or its PID now names another process), or they do not agree, the lookup searches again and decides
 *       from that search alone. A socket opened after a search started is never answered by it;</li>
 *   <li>for each owner: the executable ({@code readlink exe}), its ancestors through {@code PPid} (at most
 *       {@value #MAX_ANCESTORS}, up to the entrypoint or PID 1), and the SHA-256 of each executable, trusted on first
 *       use per path and recomputed only when the file's size, mtime, ctime, device or inode change. The owner must
 *       still hold the socket afterwards, with the start time it had before (a PID reused in between is not mistaken
 *       for it); the descriptor and the start time are kept with the identity ({@link SocketHold}) for
 *       {@link #stillHolds}, the cheap check at each later request on the connection;</li>
 *   <li>owners that do not run the same program (binary, hash and ancestry) make the connection ambiguous: denied.
 *       Several owners running the same program (a fork) identify as the first found.</li>
 * </ol>
 * The TCP tables and the full owner search are each read once for every lookup waiting when the read starts, so a
 * burst of connections costs one read, not one each; with {@link #identify(InetSocketAddress, InetSocketAddress,
 * long)} a read that started after the connection was accepted serves it too. The TCP tables are never taken from a
 * read that started before that (a client port is reused by the next connection). Holders that took the socket after
 * the search that answered (a child that inherited it while its parent keeps it, a process it was passed to) are not
 * seen, as after identification ({@link #stillHolds}).
 * A changed hash anywhere is an {@link IntegrityViolation}. Nothing is cached per connection here: the caller keeps
 * the answer for the connection and checks it with {@link #stillHolds} at each request (a process may hand its
 * connection to another, {@code pidfd_getfd(2)}, and exit). Command lines are never read: a script's path never identifies a process
 * (its interpreter does). Thread-safe; calls block on file reads.
 *
 * <p>Owners that the supervisor may not read ({@code /proc/<pid>/fd} of another user without privilege) are not
 * found, so run the supervisor as root or as the sandbox's user.
 */
public final class ProcessIdentifier {
    /** Most ancestors walked through {@code PPid}. */
    public static final int MAX_ANCESTORS = 64;

    /**
     * How long after it started an owner search may answer a later lookup whose socket it saw: 1 second
     * ({@link ProcessIdentifier}, step 2).
     */
    public static final long OWNER_SEARCH_REUSE_MILLIS = 1000;
    /** The most sockets an owner search may have seen and still answer a later lookup: 65,536. */
    public static final int OWNER_SEARCH_REUSE_MAX_SOCKETS = 65_536;

    private final IdentityOptions options;
    private final ProcTree tree;
    private final BinaryTrust trust;
    private final SharedScan scan;
    private final boolean platform;
    private final LongAdder earlierRejected = new LongAdder();

    /**
     * @param reuseNanos how long an owner search may answer later lookups
     * @param reuseMaxSockets the most sockets it may have seen to do so
     * @param clock {@link System#nanoTime()} but in tests
     */
    ProcessIdentifier(IdentityOptions options, boolean platform, long reuseNanos, int reuseMaxSockets,
                      LongSupplier clock) {
        this.options = options;
        this.tree = new ProcTree(options.procRoot());
        this.trust = new BinaryTrust(options.maxTrustedBinaries(), options.maxBinaryBytes());
        this.scan = new SharedScan(tree, options.entrypointPid().isPresent()
                ? tree.dir(options.entrypointPid().getAsLong()).resolve("net") : tree.root().resolve("net"),
                options.excludedPids(), reuseNanos, reuseMaxSockets, clock);
        this.platform = platform;
    }

    /**
     * {@return an identifier reading {@code options.procRoot()}} On an operating system other than Linux every call
     * answers {@link Cause#UNSUPPORTED_PLATFORM}, unless the root is not {@code /proc} (a fake tree in tests).
     *
     * @param options where and how to read
     */
    public static ProcessIdentifier create(IdentityOptions options) {
        Objects.requireNonNull(options, "options");
        boolean linux = System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
        boolean fake = !options.procRoot().equals(Path.of("/proc"));
        return new ProcessIdentifier(options, (linux || fake) && Files.isDirectory(options.procRoot()),
                TimeUnit.MILLISECONDS.toNanos(OWNER_SEARCH_REUSE_MILLIS), OWNER_SEARCH_REUSE_MAX_SOCKETS,
                System::nanoTime);
    }

    /** {@return whether this platform can identify processes at all (Linux with {@code /proc})} */
    public boolean available() {
        return platform;
    }

    /** {@return the options} */
    public IdentityOptions options() {
        return options;
    }

    /**
     * Identifies the process holding the client end of a connection.
     *
     * @param client the client's address as the proxy's accepted socket reports it (its remote address)
     * @param proxy the proxy's address the client connected to (the accepted socket's local address)
     * @return the identity or why there is none; never {@code null}, never throws for what {@code /proc} holds
     */
    public Identification identify(InetSocketAddress client, InetSocketAddress proxy) {
        return identify(client, proxy, scan.now());
    }

    /**
     * Identifies the process holding the client end of a connection, from reads of {@code /proc} that started at or
     * after {@code since}: when that is the time the proxy took the connection up (its client socket existed by
     * then), a burst of new connections shares one read of the TCP tables and one owner search, even those whose
     * lookups start while that read is under way. A read that started earlier is never taken for the TCP tables.
     *
     * @param client the client's address as the proxy's accepted socket reports it (its remote address)
     * @param proxy the proxy's address the client connected to (the accepted socket's local address)
     * @param since {@link System#nanoTime()} at or after which the client's socket existed (the connection was
     *     accepted), at most now
     * @return the identity or why there is none; never {@code null}, never throws for what {@code /proc} holds
     */
    public Identification identify(InetSocketAddress client, InetSocketAddress proxy, long since) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(proxy, "proxy");
        long started = since;
        if (!platform) {
            return new Unidentified(Cause.UNSUPPORTED_PLATFORM, "identity binding unavailable on this platform");
        }
        if (client.getAddress() == null || proxy.getAddress() == null) {
            return new Unidentified(Cause.NO_SOCKET, "failed to resolve peer binary: unresolved address");
        }
        OptionalLong entrypoint = options.entrypointPid();
        if (entrypoint.isPresent() && !tree.exists(entrypoint.getAsLong())) {
            return new Unidentified(Cause.ENTRYPOINT_NOT_RUNNING, "entrypoint process " + entrypoint.getAsLong()
                    + " is not running");
        }
        Long inode;
        try {
            inode = scan.inode(client, proxy, started);
        } catch (IOException e) {
            return new Unidentified(Cause.UNREADABLE, "failed to resolve peer binary: the TCP tables cannot be read ("
                    + e.getClass().getSimpleName() + ")");
        }
        if (inode == null) {
            return new Unidentified(Cause.NO_SOCKET, "failed to resolve peer binary: no TCP socket of the client in"
                    + " the sandbox's network namespace (another host, or the client closed the connection)");
        }
        try {
            SharedScan.Owners owners = owners(inode, started, true);
            Identification id = judge(owners.holders(), inode);
            if (owners.earlier() && !(id instanceof Identified)) {
                // the holders an earlier search saw no longer (all) hold the socket, or do not agree: only a search
                // made now decides anything but an identity
                earlierRejected.increment();
                id = judge(owners(inode, scan.now(), false).holders(), inode);
            }
            return id;
        } catch (IOException e) {
            return new Unidentified(Cause.UNREADABLE, "failed to resolve peer binary: the process list cannot be read"
                    + " (" + e.getClass().getSimpleName() + ")");
        }
    }

    /**
     * The socket's holders: among the entrypoint and its descendants first, read now, else from the full owner search
     * ({@link SharedScan#owners}: with {@code reuse}, possibly an earlier one that saw the socket).
     */
    private SharedScan.Owners owners(long inode, long since, boolean reuse) throws IOException {
        OptionalLong entrypoint = options.entrypointPid();
        if (entrypoint.isPresent()) {
            String target = "socket:[" + inode + "]";
            List<SharedScan.Holder> owners = new ArrayList<>();
            for (long pid : tree.descendants(entrypoint.getAsLong())) {
                if (!options.excludedPids().contains(pid) && tree.holds(pid, target)) {
                    owners.add(new SharedScan.Holder(pid, -1));
                }
            }
            if (!owners.isEmpty()) {
                return new SharedScan.Owners(owners, false);
            }
        }
        return scan.owners(inode, since, reuse);
    }

    /** Resolves every holder and decides: one program, an integrity violation, or why there is no identity. */
    private Identification judge(List<SharedScan.Holder> owners, long inode) {
        List<Identified> found = new ArrayList<>();
        String unreadable = null;
        for (SharedScan.Holder h : owners) {
            Identification id = resolve(h.pid(), h.fd(), inode);
            switch (id) {
                case Identified i -> found.add(i);
                case IntegrityViolation v -> {
                    return v;
                }
                case Unidentified u -> {
                    if (u.cause() == Cause.UNREADABLE) {
                        unreadable = u.reason();
                    }
                }
            }
        }
        if (found.isEmpty()) {
            return unreadable != null ? new Unidentified(Cause.UNREADABLE, unreadable)
                    : new Unidentified(Cause.NO_OWNER, "failed to resolve peer binary: no process holds the client"
                            + " socket (the client exited)");
        }
        ProcessIdentity first = found.get(0).process();
        long programs = found.stream().filter(p -> !p.process().sameProgram(first)).count();
        if (programs > 0 || unreadable != null) {
            return new Unidentified(Cause.AMBIGUOUS_OWNERS, "ambiguous shared socket ownership: "
                    + (found.size() + (unreadable != null ? 1 : 0)) + " processes hold the client socket and do not"
                    + " run the same binaries");
        }
        return found.get(0);
    }

    /**
     * {@return the PID of a process holding the client end of a connection, when one is found} The cheap half of
     * {@link #identify}, for fairness between the processes of one client address (never for a policy decision): the
     * socket's inode from the TCP tables and its holders from the full owner search, both shared with every lookup
     * waiting when the read starts, so a burst of connections costs one read of each (the owner search also from one
     * that started up to {@value #OWNER_SEARCH_REUSE_MILLIS} ms earlier and saw the socket); no executable, hash or
     * ancestry is read, and the holder is not checked again. Several holders: the first found.
     *
     * @param client the client's address as the proxy's accepted socket reports it
     * @param proxy the proxy's address the client connected to
     */
    public OptionalLong owner(InetSocketAddress client, InetSocketAddress proxy) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(proxy, "proxy");
        if (!platform || client.getAddress() == null || proxy.getAddress() == null) {
            return OptionalLong.empty();
        }
        long started = scan.now();
        try {
            Long inode = scan.inode(client, proxy, started);
            if (inode == null) {
                return OptionalLong.empty();
            }
            List<SharedScan.Holder> owners = scan.owners(inode, started, true).holders();
            return owners.isEmpty() ? OptionalLong.empty() : OptionalLong.of(owners.get(0).pid());
        } catch (IOException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * Resolves one owner; {@link Cause#NO_OWNER} when it vanished or no longer holds the socket. {@code fdHint}, the
     * descriptor the owner search saw (or -1), is read first: one {@code readlink} instead of every descriptor's.
     */
    private Identification resolve(long pid, int fdHint, long inode) {
        String target = "socket:[" + inode + "]";
        long started = tree.startTime(pid);
        String binary;
        BinaryTrust.Verdict verdict;
        try {
            binary = tree.exe(pid);
            verdict = trust.check(binary, tree.exeLink(pid));
        } catch (BinaryTrust.Refused e) {
            return new Unidentified(Cause.UNREADABLE, "binary integrity check failed: " + e.getMessage());
        } catch (java.nio.file.AccessDeniedException e) {
            return new Unidentified(Cause.UNREADABLE, "failed to resolve peer binary: the executable of process "
                    + pid + " cannot be read");
        } catch (IOException e) {
            return new Unidentified(Cause.NO_OWNER, "vanished");
        }
        if (!verdict.trusted()) {
            return new IntegrityViolation(pid, binary, verdict.trustedSha256(), verdict.sha256());
        }
        List<ProcessIdentity.Ancestor> ancestors = new ArrayList<>();
        long current = pid;
        OptionalLong entrypoint = options.entrypointPid();
        while (ancestors.size() < MAX_ANCESTORS && (entrypoint.isEmpty() || current != entrypoint.getAsLong())
                && current != 1) {
            OptionalLong parent = tree.parent(current);
            if (parent.isEmpty()) {
                break;
            }
            long ppid = parent.getAsLong();
            String ancestor;
            BinaryTrust.Verdict v;
            try {
                ancestor = tree.exe(ppid);
                v = trust.check(ancestor, tree.exeLink(ppid));
            } catch (BinaryTrust.Refused e) {
                return new Unidentified(Cause.UNREADABLE, "binary integrity check failed: " + e.getMessage());
            } catch (IOException e) {
                break; // an ancestor that cannot be read (exited, kernel thread, no access) ends the chain
            }
            if (!v.trusted()) {
                return new IntegrityViolation(ppid, ancestor, v.trustedSha256(), v.sha256());
            }
            ancestors.add(new ProcessIdentity.Ancestor(ppid, ancestor, v.sha256()));
            current = ppid;
        }
        int fd = fdHint >= 0 && tree.holdsAt(pid, fdHint, target) ? fdHint : tree.fdOf(pid, target);
        if (fd < 0 || tree.startTime(pid) != started) {
            return new Unidentified(Cause.NO_OWNER, "vanished");
        }
        return new Identified(new ProcessIdentity(pid, binary, verdict.sha256(), ancestors),
                Optional.of(new SocketHold(pid, started, inode, fd)));
    }

    /**
     * {@return whether the process identified for a connection still holds its socket} The check made at each
     * request on a connection that carries an identity: one {@code readlink} of the descriptor it held (its other
     * descriptors only when that one no longer is the socket) and its start time, so that a process that took over
     * the PID is not taken for it. Reads that process's {@code /proc} entries only: never the TCP tables, never
     * another process. A second holder while the identified process still holds the socket is not seen here.
     *
     * @param hold where the identified process held the socket
     */
    public boolean stillHolds(SocketHold hold) {
        Objects.requireNonNull(hold, "hold");
        if (!platform) {
            return true;
        }
        String target = hold.target();
        boolean held = tree.holdsAt(hold.pid(), hold.fd(), target) || tree.holds(hold.pid(), target);
        // the start time after the descriptor: a process that replaced the identified one under its PID in between
        // has another start time
        return held && tree.sameProcess(hold.pid(), hold.startTime());
    }

    /**
     * {@return how many lookups took their socket's holders from an owner search that started before them and found
     * that those no longer identify it, so searched again}
     */
    public long earlierSearchesRejected() {
        return earlierRejected.sum();
    }

    /** {@return how many full owner searches over every process ran so far (concurrent lookups share one)} */
    public long fullSearches() {
        return scan.ownerSearches();
    }

    /**
     * {@return how many times a TCP table was read so far ({@code tcp} and {@code tcp6} count one each; concurrent
     * lookups share one read)}
     */
    public long tableReads() {
        return scan.tableReads();
    }

    /** {@return how many binary hashes were computed so far (each path once, again only after a change)} */
    public long hashesComputed() {
        return trust.hashesComputed();
    }
}
