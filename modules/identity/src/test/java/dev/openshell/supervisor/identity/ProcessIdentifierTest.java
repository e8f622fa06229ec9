package dev.openshell.supervisor.identity;

import static dev.openshell.supervisor.identity.FakeProc.addr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.identity.Identification.Cause;
import dev.openshell.supervisor.identity.Identification.Identified;
import dev.openshell.supervisor.identity.Identification.IntegrityViolation;
import dev.openshell.supervisor.identity.Identification.Unidentified;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ProcessIdentifier} on a fake {@code /proc} tree: every branch of the lookup, without real processes. */
class ProcessIdentifierTest {
    private static final InetSocketAddress PROXY = addr("127.0.0.1", 3128);
    private static final InetSocketAddress CLIENT = addr("127.0.0.1", 40001);

    @TempDir
    Path dir;
    FakeProc proc;
    Path curl;
    Path bash;
    Path init;

    @BeforeEach
    void tree() throws IOException {
        proc = new FakeProc(dir);
        init = proc.binary("sbin/init", "init");
        bash = proc.binary("usr/bin/bash", "bash");
        curl = proc.binary("usr/bin/curl", "curl");
        proc.process(1, 0, init).process(100, 1, bash).process(200, 100, curl, 9001);
    }

    private ProcessIdentifier identifier() {
        return ProcessIdentifier.create(IdentityOptions.defaults().withProcRoot(proc.root));
    }

    private static ProcessIdentity identified(Identification id) {
        return assertInstanceOf(Identified.class, id, id::reason).process();
    }

    private static Cause cause(Identification id) {
        return assertInstanceOf(Unidentified.class, id).cause();
    }

    @Test
    void findsTheOwnerOfAnIpv4SocketWithItsAncestors() {
        proc.noise(CLIENT, addr("127.0.0.1", 80)).socket(CLIENT, PROXY, 9001, false);
        ProcessIdentity p = identified(identifier().identify(CLIENT, PROXY));
        assertEquals(200, p.pid());
        assertEquals(curl.toString(), p.binary());
        assertEquals(List.of(bash.toString(), init.toString()), p.ancestors().stream()
                .map(ProcessIdentity.Ancestor::binary).toList(), "the walk ends at PID 1, PID 1 included");
        assertEquals(List.of(100L, 1L), p.ancestors().stream().map(ProcessIdentity.Ancestor::pid).toList());
        assertEquals(List.of(curl.toString(), bash.toString(), init.toString()), p.binaries());
        assertEquals("a3b3d2ea9b1ce2ef7e1bef6a2d0b3b0b5b68b84ef5d7d8dfbf3d0cf9ad6d1d24".length(), p.sha256().length());
        assertEquals(new OriginatingProcess(curl.toString(), 200, List.of(bash.toString(), init.toString())),
                p.toOriginatingProcess());
    }

    @Test
    void theCheapOwnerLookupFindsThePidAndNothingForAnotherTuple() {
        proc.noise(CLIENT, addr("127.0.0.1", 80)).socket(CLIENT, PROXY, 9001, false);
        ProcessIdentifier id = identifier();
        assertEquals(java.util.OptionalLong.of(200), id.owner(CLIENT, PROXY));
        assertEquals(0, id.hashesComputed(), "no executable is read for fairness");
        assertEquals(java.util.OptionalLong.empty(), id.owner(addr("127.0.0.1", 40002), PROXY));
        proc.exit(200);
        assertEquals(java.util.OptionalLong.empty(), identifier().owner(CLIENT, PROXY));
    }

    @Test
    void findsAnIpv4MappedSocketInTheIpv6Table() {
        proc.socket(CLIENT, PROXY, 9001, true);
        assertEquals(200, identified(identifier().identify(CLIENT, PROXY)).pid());
        // the proxy may report the mapped form itself
        InetSocketAddress mappedClient = new InetSocketAddress(mapped(CLIENT), CLIENT.getPort());
        assertEquals(200, identified(identifier().identify(mappedClient, PROXY)).pid());
    }

    @Test
    void findsAnIpv6Socket() {
        InetSocketAddress client = addr("::1", 50000);
        InetSocketAddress proxy = addr("::1", 3128);
        proc.socket(client, proxy, 9001, true);
        assertEquals(200, identified(identifier().identify(client, proxy)).pid());
        assertEquals(Cause.NO_SOCKET, cause(identifier().identify(addr("::2", 50000), proxy)));
    }

    @Test
    void theFourTupleMustMatchBothEnds() {
        proc.socket(CLIENT, PROXY, 9001, false);
        assertEquals(Cause.NO_SOCKET, cause(identifier().identify(addr("127.0.0.1", 40002), PROXY)));
        assertEquals(Cause.NO_SOCKET, cause(identifier().identify(CLIENT, addr("127.0.0.1", 3129))));
        assertEquals(Cause.NO_SOCKET, cause(identifier().identify(addr("127.0.0.2", 40001), PROXY)));
        // the proxy's own end of the connection (local = proxy, remote = client) is not the client's socket
        assertEquals(Cause.NO_SOCKET, cause(identifier().identify(PROXY, CLIENT)));
    }

    @Test
    void aRowWithInodeZeroBelongsToNoProcess() {
        proc.noise(CLIENT, PROXY);
        Identification id = identifier().identify(CLIENT, PROXY);
        assertEquals(Cause.NO_SOCKET, cause(id));
        assertTrue(id.reason().startsWith("failed to resolve peer binary: "), id.reason());
    }

    @Test
    void aVanishedPeerIsNoOwner() {
        proc.socket(CLIENT, PROXY, 9001, false);
        proc.exit(200);
        Identification id = identifier().identify(CLIENT, PROXY);
        assertEquals(Cause.NO_OWNER, cause(id));
        assertEquals("failed to resolve peer binary: no process holds the client socket (the client exited)",
                id.reason());
    }

    @Test
    void aLookupNeverTakesTheAnswerOfAPassThatStartedBeforeIt() {
        proc.socket(CLIENT, PROXY, 9002, false);
        ProcessIdentifier identifier = identifier();
        assertEquals(Cause.NO_OWNER, cause(identifier.identify(CLIENT, PROXY)));
        proc.process(202, 100, curl, 9002); // the owner appears after the first pass
        assertEquals(202, identified(identifier.identify(CLIENT, PROXY)).pid());
        assertEquals(2, identifier.fullSearches());
    }

    @Test
    void concurrentLookupsAllGetAnAnswer() throws Exception {
        proc.socket(CLIENT, PROXY, 9001, false);
        ProcessIdentifier identifier = identifier();
        int n = 16;
        try (var pool = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {
            List<java.util.concurrent.Future<Identification>> all = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                all.add(pool.submit(() -> identifier.identify(CLIENT, PROXY)));
            }
            for (var f : all) {
                assertEquals(200, identified(f.get()).pid());
            }
        }
        assertTrue(identifier.fullSearches() >= 1 && identifier.fullSearches() <= n, () -> "" + identifier.fullSearches());
    }

    @Test
    void forkedOwnersRunningTheSameProgramIdentifyAsTheFirst() {
        proc.process(201, 100, curl, 9001).socket(CLIENT, PROXY, 9001, false);
        ProcessIdentity p = identified(identifier().identify(CLIENT, PROXY));
        assertEquals(curl.toString(), p.binary());
    }

    @Test
    void ownersRunningDifferentBinariesAreAmbiguous() {
        Path python = proc.binary("usr/bin/python3", "python");
        proc.process(300, 100, python, 9001).socket(CLIENT, PROXY, 9001, false);
        Identification id = identifier().identify(CLIENT, PROXY);
        assertEquals(Cause.AMBIGUOUS_OWNERS, cause(id));
        assertTrue(id.reason().startsWith("ambiguous shared socket ownership: 2 processes"), id.reason());
    }

    @Test
    void ownersWithDifferentAncestryAreAmbiguous() {
        Path sh = proc.binary("bin/sh", "sh");
        proc.process(110, 1, sh).process(210, 110, curl, 9001).socket(CLIENT, PROXY, 9001, false);
        assertEquals(Cause.AMBIGUOUS_OWNERS, cause(identifier().identify(CLIENT, PROXY)));
    }

    @Test
    void aReplacedBinaryIsAnIntegrityViolationAndAnUnchangedOneIsNotRehashed() throws IOException {
        proc.socket(CLIENT, PROXY, 9001, false);
        ProcessIdentifier identifier = identifier();
        ProcessIdentity first = identified(identifier.identify(CLIENT, PROXY));
        long hashes = identifier.hashesComputed();
        assertEquals(3, hashes, "curl, bash and init, once each");
        identified(identifier.identify(CLIENT, PROXY));
        assertEquals(hashes, identifier.hashesComputed(), "nothing changed: no new hash");

        // touched, same content: hashed again (the mtime changed), still trusted
        Files.setLastModifiedTime(curl, FileTime.fromMillis(System.currentTimeMillis() - 3_600_000));
        assertEquals(first.sha256(), identified(identifier.identify(CLIENT, PROXY)).sha256());
        assertEquals(hashes + 1, identifier.hashesComputed());

        Files.writeString(curl, "not curl any more");
        IntegrityViolation v = assertInstanceOf(IntegrityViolation.class, identifier.identify(CLIENT, PROXY));
        assertEquals(200, v.pid());
        assertEquals(curl.toString(), v.binary());
        assertEquals(first.sha256(), v.trustedSha256());
        assertFalse(v.observedSha256().equals(v.trustedSha256()));
        assertTrue(v.reason().startsWith("binary integrity violation: " + curl + " changed since it was first"
                + " seen"), v.reason());
        long after = identifier.hashesComputed();
        assertInstanceOf(IntegrityViolation.class, identifier.identify(CLIENT, PROXY), "stays refused");
        assertEquals(after, identifier.hashesComputed(), "the changed file is remembered, not hashed per connection");
    }

    @Test
    void aReplacedAncestorIsAnIntegrityViolation() throws IOException {
        proc.socket(CLIENT, PROXY, 9001, false);
        ProcessIdentifier identifier = identifier();
        identified(identifier.identify(CLIENT, PROXY));
        Files.delete(bash);
        Files.writeString(bash, "another shell");
        IntegrityViolation v = assertInstanceOf(IntegrityViolation.class, identifier.identify(CLIENT, PROXY));
        assertEquals(100, v.pid());
        assertEquals(bash.toString(), v.binary());
    }

    @Test
    void theEntrypointsNamespaceAndDescendantsComeFirstAndEndTheWalk() {
        // the sandbox: entrypoint 100 (bash) in its own namespace; the same four-tuple is absent from /proc/net
        proc.process(150, 100, curl).socket(CLIENT, PROXY, 9001, false).ownNamespace(100);
        Path other = proc.binary("usr/bin/other", "other");
        proc.process(900, 1, other, 9001); // outside the sandbox tree, holding the same inode
        ProcessIdentifier sandboxed = ProcessIdentifier.create(
                IdentityOptions.defaults().withProcRoot(proc.root).withEntrypoint(100));
        ProcessIdentity p = identified(sandboxed.identify(CLIENT, PROXY));
        assertEquals(200, p.pid());
        assertEquals(List.of(bash.toString()), p.ancestors().stream().map(ProcessIdentity.Ancestor::binary).toList(),
                "the walk stops at the entrypoint");
        // without an entrypoint the whole tree is searched and the two owners disagree
        assertEquals(Cause.AMBIGUOUS_OWNERS, cause(identifier().identify(CLIENT, PROXY)));
    }

    @Test
    void descendantsAreFoundFromParentIdsWhenTheKernelHasNoChildrenFiles() throws IOException {
        FakeProc bare = new FakeProc(dir.resolve("bare"));
        bare.childrenFiles = false;
        Path sh = bare.binary("bin/sh", "sh");
        Path tool = bare.binary("bin/tool", "tool");
        Path rogue = bare.binary("bin/rogue", "rogue");
        bare.process(1, 0, sh).process(10, 1, sh).process(11, 10, sh).process(12, 11, tool, 77)
                .process(50, 1, rogue, 77).socket(CLIENT, PROXY, 77, false).ownNamespace(10);
        ProcessIdentifier sandboxed = ProcessIdentifier.create(
                IdentityOptions.defaults().withProcRoot(bare.root).withEntrypoint(10));
        assertEquals(tool.toString(), identified(sandboxed.identify(CLIENT, PROXY)).binary());
    }

    @Test
    void anEntrypointThatIsNotRunningIsRefused() {
        ProcessIdentifier sandboxed = ProcessIdentifier.create(
                IdentityOptions.defaults().withProcRoot(proc.root).withEntrypoint(4242));
        Identification id = sandboxed.identify(CLIENT, PROXY);
        assertEquals(Cause.ENTRYPOINT_NOT_RUNNING, cause(id));
        assertEquals("entrypoint process 4242 is not running", id.reason());
    }

    @Test
    void theAncestorWalkIsBoundedAndSurvivesACycle() {
        Path sh = proc.binary("bin/sh", "sh");
        // 1000 <-> 1001 are each other's parent: the walk must end
        proc.process(1000, 1001, sh).process(1001, 1000, sh).process(1002, 1001, curl, 555)
                .socket(CLIENT, PROXY, 555, false);
        ProcessIdentity p = identified(identifier().identify(CLIENT, PROXY));
        assertEquals(ProcessIdentifier.MAX_ANCESTORS, p.ancestors().size());
    }

    @Test
    void excludedProcessesAreNotSearched() {
        proc.socket(CLIENT, PROXY, 9001, false);
        ProcessIdentifier excluding = ProcessIdentifier.create(
                IdentityOptions.defaults().withProcRoot(proc.root).withExcluded(Set.of(200L)));
        assertEquals(Cause.NO_OWNER, cause(excluding.identify(CLIENT, PROXY)));
    }

    @Test
    void aMissingProcRootIsAnUnsupportedPlatform() {
        ProcessIdentifier none = ProcessIdentifier.create(
                IdentityOptions.defaults().withProcRoot(dir.resolve("absent")));
        assertFalse(none.available());
        Identification id = none.identify(CLIENT, PROXY);
        assertEquals(Cause.UNSUPPORTED_PLATFORM, cause(id));
        assertEquals("identity binding unavailable on this platform", id.reason());
    }

    @Test
    void aFullTrustStoreRefusesNewPaths() {
        proc.socket(CLIENT, PROXY, 9001, false);
        ProcessIdentifier small = ProcessIdentifier.create(new IdentityOptions(proc.root,
                java.util.OptionalLong.empty(), Set.of(), 1, IdentityOptions.DEFAULT_MAX_BINARY_BYTES));
        Identification id = small.identify(CLIENT, PROXY);
        assertEquals(Cause.UNREADABLE, cause(id));
        assertEquals("binary integrity check failed: the binary trust store is full (1 paths)", id.reason());
    }

    @Test
    void aBinaryOverTheHashLimitIsRefused() {
        proc.socket(CLIENT, PROXY, 9001, false);
        ProcessIdentifier small = ProcessIdentifier.create(new IdentityOptions(proc.root,
                java.util.OptionalLong.empty(), Set.of(), 100, 3));
        assertEquals(Cause.UNREADABLE, cause(small.identify(CLIENT, PROXY)));
    }

    private static java.net.InetAddress mapped(InetSocketAddress a) {
        byte[] v4 = a.getAddress().getAddress();
        byte[] m = new byte[16];
        m[10] = (byte) 0xff;
        m[11] = (byte) 0xff;
        System.arraycopy(v4, 0, m, 12, 4);
        try {
            return java.net.Inet6Address.getByAddress(null, m, -1);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
