package dev.openshell.supervisor.identity;

import static dev.openshell.supervisor.identity.FakeProc.addr;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.identity.Identification.Identified;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ProcessIdentifier#stillHolds}: the check at each request that the process a connection was identified as
 * still holds its socket (issue 39, item 8), on a fake {@code /proc} tree.
 */
class StillHoldsTest {
    private static final InetSocketAddress PROXY = addr("127.0.0.1", 3128);
    private static final InetSocketAddress CLIENT = addr("127.0.0.1", 40001);

    @TempDir
    Path dir;
    FakeProc proc;
    Path curl;
    Path python;
    ProcessIdentifier identifier;

    @BeforeEach
    void tree() throws IOException {
        proc = new FakeProc(dir);
        Path init = proc.binary("sbin/init", "init");
        curl = proc.binary("usr/bin/curl", "curl");
        python = proc.binary("usr/bin/python3", "python");
        proc.process(1, 0, init).process(200, 1, curl, 9001).process(300, 1, python).socket(CLIENT, PROXY, 9001,
                false);
        identifier = ProcessIdentifier.create(IdentityOptions.defaults().withProcRoot(proc.root));
    }

    private SocketHold hold() {
        Identified id = assertInstanceOf(Identified.class, identifier.identify(CLIENT, PROXY));
        return id.hold().orElseThrow();
    }

    @Test
    void theIdentityRecordsWhereTheProcessHeldTheSocket() {
        SocketHold h = hold();
        assertEquals(200, h.pid());
        assertEquals(9001, h.inode());
        assertEquals(1, h.fd(), "descriptor 0 is a pipe in the fake tree");
        assertTrue(h.startTime() > 0, "read from stat field 22, past a command name holding ') ('");
        assertTrue(identifier.stillHolds(h));
    }

    @Test
    void aConnectionBorrowedByAnotherProcessWhoseOwnerExitedNoLongerHolds() {
        SocketHold h = hold();
        proc.hold(300, 7, 9001).exit(200);
        assertFalse(identifier.stillHolds(h));
        Identified now = assertInstanceOf(Identified.class, identifier.identify(CLIENT, PROXY));
        assertEquals(python.toString(), now.process().binary(), "identified again: the holder now");
    }

    @Test
    void aPidTakenOverByAnotherProcessHoldingTheSocketIsNotTheSameProcess() {
        SocketHold h = hold();
        proc.exit(200).process(200, 1, python, 9001);
        assertFalse(identifier.stillHolds(h), "same PID, same socket, another start time");
    }

    @Test
    void aDescriptorMovedWithinTheSameProcessStillHolds() {
        SocketHold h = hold();
        proc.hold(200, 9, 9001).close(200, 1);
        assertTrue(identifier.stillHolds(h), "dup2 and close: the process's other descriptors are read");
        proc.close(200, 9);
        assertFalse(identifier.stillHolds(h), "closed: the process no longer holds it");
    }

    @Test
    void aSecondHolderWhileTheFirstLivesIsNotSeenHere() {
        SocketHold h = hold();
        proc.hold(300, 7, 9001);
        assertTrue(identifier.stillHolds(h), "documented: the per-request check reads the identified process only");
    }
}
