package dev.openshell.supervisor.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.openshell.supervisor.identity.Identification.Identified;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * One full owner search answering later lookups, on the real {@code /proc} ({@link ProcessIdentifier}, step 2): a
 * {@code python3} child opens two loopback connections to this JVM; the first is identified (one search, which sees
 * both); then the second socket changes hands in one of the ways a search's holders go stale (inherited by a
 * {@code sleep} child and closed by python, passed over {@code SCM_RIGHTS} to another process and closed, held by a
 * forked child after python exited), and the second lookup must name the process that holds it now. The identifier
 * here keeps a search for 60 s instead of 1 s, so that a slow host cannot turn the case into a fresh search.
 */
@EnabledOnOs(OS.LINUX)
class LiveOwnerSearchReuseTest {
    private static final Path PYTHON = Path.of("/usr/bin/python3");
    private static final Path SLEEP = Path.of("/bin/sleep");
    /** Connects two sockets, says so, then does what the first line of standard input asks with the second. */
    private static final String SCRIPT = String.join("\n",
            "import os, socket, subprocess, sys, time",
            "port = int(sys.argv[1])",
            "s1 = socket.create_connection(('127.0.0.1', port))",
            "s2 = socket.create_connection(('127.0.0.1', port))",
            "print('connected', flush=True)",
            "cmd = sys.stdin.readline().strip()",
            "if cmd == 'inherit':",
            "    p = subprocess.Popen(['/bin/sleep', '60'], pass_fds=[s2.fileno()])",
            "    s2.close()",
            "    print(p.pid, flush=True)",
            "elif cmd == 'pass':",
            "    a, b = socket.socketpair(socket.AF_UNIX)",
            "    recv = ('import socket, sys, time\\n'",
            "            'c = socket.socket(fileno=int(sys.argv[1]))\\n'",
            "            'msg, fds, flags, addr = socket.recv_fds(c, 1, 1)\\n'",
            "            'print(len(fds), flush=True)\\n'",
            "            'time.sleep(60)\\n')",
            "    p = subprocess.Popen([sys.executable, '-c', recv, str(b.fileno())], pass_fds=[b.fileno()],",
            "                         stdout=subprocess.PIPE)",
            "    b.close()",
            "    socket.send_fds(a, [b'x'], [s2.fileno()])",
            "    s2.close()",
            "    assert p.stdout.readline().strip() == b'1'",
            "    print(p.pid, flush=True)",
            "elif cmd == 'exit':",
            "    r, w = os.pipe()",
            "    pid = os.fork()",
            "    if pid == 0:",
            "        os.close(r); os.close(w); s1.close(); time.sleep(60); os._exit(0)",
            "    print(pid, flush=True)",
            "    os._exit(0)",
            "sys.stdin.read()");

    private ServerSocket server;
    private final List<Process> children = new ArrayList<>();
    private final List<Long> orphans = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final ProcessIdentifier identifier = new ProcessIdentifier(
            IdentityOptions.defaults().withExcluded(Set.of(ProcessHandle.current().pid())), true,
            TimeUnit.SECONDS.toNanos(60), ProcessIdentifier.OWNER_SEARCH_REUSE_MAX_SOCKETS, System::nanoTime);

    @BeforeEach
    void listen() throws IOException {
        assumeTrue(Files.isExecutable(PYTHON) && Files.isExecutable(SLEEP), "needs python3 and sleep");
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        server.setSoTimeout(20_000);
    }

    @AfterEach
    void stop() throws IOException, InterruptedException {
        for (Socket s : sockets) {
            s.close();
        }
        if (server != null) {
            server.close();
        }
        for (Process p : children) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        for (long pid : orphans) {
            ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
    }

    /** A python client with two connections to this JVM: the process, its output, and the accepted sockets. */
    private record Client(Process process, BufferedReader out, Socket first, Socket second) {
        long command(String cmd) throws IOException {
            OutputStream in = process.getOutputStream();
            in.write((cmd + "\n").getBytes(StandardCharsets.US_ASCII));
            in.flush();
            return Long.parseLong(out.readLine().trim());
        }
    }

    private Client client() throws IOException {
        Process p = new ProcessBuilder(PYTHON.toString(), "-c", SCRIPT, Integer.toString(server.getLocalPort()))
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        children.add(p);
        Socket first = server.accept();
        sockets.add(first);
        Socket second = server.accept();
        sockets.add(second);
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.US_ASCII));
        assertEquals("connected", out.readLine());
        return new Client(p, out, first, second);
    }

    private ProcessIdentity identify(Socket accepted) {
        Identification id = identifier.identify((InetSocketAddress) accepted.getRemoteSocketAddress(),
                (InetSocketAddress) accepted.getLocalSocketAddress());
        return assertInstanceOf(Identified.class, id, id::reason).process();
    }

    private static String python() throws IOException {
        return PYTHON.toRealPath().toString();
    }

    @Test
    void theSecondConnectionOfABurstTakesNoSearch() throws IOException {
        Client c = client();
        assertEquals(c.process().pid(), identify(c.first()).pid());
        ProcessIdentity second = identify(c.second());
        assertEquals(c.process().pid(), second.pid());
        assertEquals(python(), second.binary());
        assertEquals(1, identifier.fullSearches(), "the first lookup's search saw both sockets");
        assertEquals(0, identifier.earlierSearchesRejected());
    }

    @Test
    void aSocketInheritedBySleepAndClosedByPythonIsSleeps() throws IOException {
        Client c = client();
        assertEquals(c.process().pid(), identify(c.first()).pid());
        long sleep = c.command("inherit");
        ProcessIdentity p = identify(c.second());
        assertEquals(sleep, p.pid());
        assertEquals(SLEEP.toRealPath().toString(), p.binary());
        assertEquals(c.process().pid(), p.ancestors().get(0).pid());
        assertEquals(1, identifier.earlierSearchesRejected(), "python, which the search saw, closed it");
        assertEquals(2, identifier.fullSearches());
    }

    @Test
    void aSocketPassedOverScmRightsAndClosedIsTheReceivers() throws IOException {
        Client c = client();
        identify(c.first());
        long receiver = c.command("pass");
        ProcessIdentity p = identify(c.second());
        assertEquals(receiver, p.pid());
        assertEquals(python(), p.binary());
        assertEquals(1, identifier.earlierSearchesRejected());
    }

    @Test
    void aSocketHeldByAChildAfterItsParentExitedIsTheChilds() throws IOException, InterruptedException {
        Client c = client();
        identify(c.first());
        long child = c.command("exit");
        orphans.add(child);
        assertTrue(c.process().waitFor(20, TimeUnit.SECONDS), "python exited");
        ProcessIdentity p = identify(c.second());
        assertEquals(child, p.pid());
        assertEquals(python(), p.binary());
        assertEquals(1, identifier.earlierSearchesRejected(), "the search saw the parent, which exited");
    }
}
