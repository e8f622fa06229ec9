package dev.openshell.supervisor.identity;

import static dev.openshell.supervisor.identity.FakeProc.addr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.openshell.supervisor.identity.Identification.Cause;
import dev.openshell.supervisor.identity.Identification.Identified;
import dev.openshell.supervisor.identity.Identification.Unidentified;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One full owner search answering later lookups whose socket it saw ({@link ProcessIdentifier}, step 2), on a fake
 * {@code /proc} tree with a clock the test moves: what it saves (searches), its bounds (age, sockets), and every way
 * its holders can be out of date (closed, passed on, inherited, exited, PID reused, inode reused), none of which may
 * attribute a connection to a process that does not hold it.
 */
class OwnerSearchReuseTest {
    private static final InetSocketAddress PROXY = addr("127.0.0.1", 3128);
    private static final InetSocketAddress A = addr("127.0.0.1", 40001);
    private static final InetSocketAddress B = addr("127.0.0.1", 40002);
    private static final InetSocketAddress C = addr("127.0.0.1", 40003);
    private static final long AGE = TimeUnit.MILLISECONDS.toNanos(ProcessIdentifier.OWNER_SEARCH_REUSE_MILLIS);

    @TempDir
    Path dir;
    FakeProc proc;
    Path curl;
    Path python;
    Path sleep;
    final AtomicLong clock = new AtomicLong(1_000_000_000L);

    @BeforeEach
    void tree() throws IOException {
        proc = new FakeProc(dir);
        Path init = proc.binary("sbin/init", "init");
        curl = proc.binary("usr/bin/curl", "curl");
        python = proc.binary("usr/bin/python3", "python");
        sleep = proc.binary("usr/bin/sleep", "sleep");
        // curl holds A and B (a client that opened two connections at once)
        proc.process(1, 0, init).process(200, 1, curl, 9001, 9002).socket(A, PROXY, 9001, false)
                .socket(B, PROXY, 9002, false);
    }

    private ProcessIdentifier identifier(int maxSockets) {
        return new ProcessIdentifier(IdentityOptions.defaults().withProcRoot(proc.root), true, AGE, maxSockets,
                clock::get);
    }

    private ProcessIdentifier identifier() {
        return identifier(ProcessIdentifier.OWNER_SEARCH_REUSE_MAX_SOCKETS);
    }

    private static ProcessIdentity identified(Identification id) {
        return assertInstanceOf(Identified.class, id, id::reason).process();
    }

    @Test
    void oneSearchAnswersEverySocketItSaw() {
        ProcessIdentifier id = identifier();
        assertEquals(200, identified(id.identify(A, PROXY)).pid());
        clock.addAndGet(AGE / 2);
        assertEquals(200, identified(id.identify(B, PROXY)).pid());
        assertEquals(1, id.fullSearches(), "B was seen by A's search");
        assertEquals(2, id.tableReads(), "net/tcp is read for each lookup, and net/tcp6 never (both sockets are in net/tcp)");
        assertEquals(0, id.earlierSearchesRejected());
    }

    @Test
    void readsThatStartedAfterTheConnectionWasTakenUpServeIt() {
        ProcessIdentifier id = identifier();
        long opened = clock.get();
        clock.addAndGet(1);
        identified(id.identify(A, PROXY, opened));
        clock.addAndGet(1);
        assertEquals(200, identified(id.identify(B, PROXY, opened)).pid());
        assertEquals(1, id.tableReads(), "B's connection was taken up before A's lookup read net/tcp");
        identified(id.identify(B, PROXY));
        assertEquals(2, id.tableReads(), "a lookup from now reads net/tcp again");
        assertEquals(1, id.fullSearches());
    }

    @Test
    void theDescriptorTheSearchSawIsReadAgainAndAMovedOneFound() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        // curl moved B from descriptor 2 to 6, and 2 now is another socket
        proc.close(200, 2).hold(200, 2, 9999).hold(200, 6, 9002);
        clock.addAndGet(1);
        Identified b = assertInstanceOf(Identified.class, id.identify(B, PROXY));
        assertEquals(200, b.process().pid());
        assertEquals(6, b.hold().orElseThrow().fd(), "descriptor 2 was read again, and is not B any more");
        assertEquals(1, id.fullSearches());
        Identified a = assertInstanceOf(Identified.class, id.identify(A, PROXY));
        assertEquals(1, a.hold().orElseThrow().fd(), "the descriptor the search saw");
    }

    @Test
    void aSocketOpenedAfterTheSearchTakesANewOne() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        proc.process(300, 1, python, 9003).socket(C, PROXY, 9003, false);
        clock.addAndGet(1);
        assertEquals(300, identified(id.identify(C, PROXY)).pid());
        assertEquals(2, id.fullSearches());
    }

    @Test
    void aSearchOlderThanTheAgeBoundAnswersNothing() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        clock.addAndGet(AGE + 1);
        assertEquals(200, identified(id.identify(B, PROXY)).pid());
        assertEquals(2, id.fullSearches());
    }

    @Test
    void aSearchThatSawMoreSocketsThanTheBoundAnswersNothingLater() {
        ProcessIdentifier id = identifier(1);
        identified(id.identify(A, PROXY));
        clock.addAndGet(1);
        identified(id.identify(B, PROXY));
        assertEquals(2, id.fullSearches(), "the search saw 2 sockets, the bound is 1");
    }

    @Test
    void aSocketPassedToAnotherProcessIsItsNewHolders() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        // curl hands B to a python process (SCM_RIGHTS, pidfd_getfd) and closes its own descriptor
        proc.process(300, 1, python).hold(300, 7, 9002).close(200, 2);
        clock.addAndGet(1);
        ProcessIdentity p = identified(id.identify(B, PROXY));
        assertEquals(300, p.pid());
        assertEquals(python.toString(), p.binary());
        assertEquals(1, id.earlierSearchesRejected(), "the earlier search's holder no longer holds B");
        assertEquals(2, id.fullSearches());
    }

    @Test
    void aSocketInheritedByAChildWhoseParentClosedItIsTheChilds() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        // curl forks a child that execs sleep, keeping B; curl closes its copy
        proc.process(400, 200, sleep, 9002).close(200, 2);
        clock.addAndGet(1);
        ProcessIdentity p = identified(id.identify(B, PROXY));
        assertEquals(400, p.pid());
        assertEquals(sleep.toString(), p.binary());
        assertEquals(200, p.ancestors().get(0).pid());
    }

    @Test
    void aHolderThatExitedIsNeverTheAnswer() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        // a child inherits B, then curl exits
        proc.process(400, 200, sleep, 9002).exit(200);
        clock.addAndGet(1);
        assertEquals(400, identified(id.identify(B, PROXY)).pid());
    }

    @Test
    void aReusedPidIsNotTheProcessTheSearchSaw() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        // curl exits; its PID now names python (another start time), which does not hold B; sleep does
        proc.exit(200).process(200, 1, python).process(400, 1, sleep, 9002);
        clock.addAndGet(1);
        ProcessIdentity p = identified(id.identify(B, PROXY));
        assertEquals(400, p.pid());
        assertEquals(sleep.toString(), p.binary());
    }

    @Test
    void aReusedPidThatHoldsNothingAndNoOtherHolderIsNoOwner() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        proc.exit(200).process(200, 1, python);
        clock.addAndGet(1);
        Unidentified u = assertInstanceOf(Unidentified.class, id.identify(B, PROXY));
        assertEquals(Cause.NO_OWNER, u.cause(), u::reason);
        assertEquals(2, id.fullSearches(), "decided from a search made for this lookup");
    }

    @Test
    void aReusedInodeIsAnsweredByItsHoldersNow() {
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        // B's socket closes; a new connection C gets its inode number, held by python
        proc.close(200, 2).process(300, 1, python, 9002).socket(C, PROXY, 9002, false);
        clock.addAndGet(1);
        assertEquals(300, identified(id.identify(C, PROXY)).pid());
        assertEquals(1, id.earlierSearchesRejected());
    }

    @Test
    void holdersThatDisagreeAreDecidedByASearchMadeNow() {
        // curl and python both held B when the search ran; python has closed it since: curl alone, no second search
        proc.process(300, 1, python).hold(300, 5, 9002);
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        proc.close(300, 5);
        clock.addAndGet(1);
        assertEquals(200, identified(id.identify(B, PROXY)).pid());
        assertEquals(1, id.fullSearches());
        // both hold it: ambiguous, and only after a search made for this lookup says so too
        proc.hold(300, 5, 9002);
        clock.addAndGet(1);
        ProcessIdentifier again = identifier();
        identified(again.identify(A, PROXY));
        clock.addAndGet(1);
        Unidentified u = assertInstanceOf(Unidentified.class, again.identify(B, PROXY));
        assertEquals(Cause.AMBIGUOUS_OWNERS, u.cause(), u::reason);
        assertEquals(2, again.fullSearches());
        assertEquals(1, again.earlierSearchesRejected());
    }

    @Test
    void aHolderThatCameAfterTheSearchIsNotSeenAsAfterIdentification() {
        // documented: a process that took the socket after the search, while the searched holder still holds it,
        // is not seen (as after identification, ProcessIdentifier#stillHolds); the searched holder still holds it
        ProcessIdentifier id = identifier();
        identified(id.identify(A, PROXY));
        proc.process(400, 200, sleep, 9002);
        clock.addAndGet(1);
        assertEquals(200, identified(id.identify(B, PROXY)).pid());
        // past the age bound, a new search sees both
        clock.addAndGet(AGE + 1);
        assertEquals(Cause.AMBIGUOUS_OWNERS, assertInstanceOf(Unidentified.class, id.identify(B, PROXY)).cause());
    }
}
