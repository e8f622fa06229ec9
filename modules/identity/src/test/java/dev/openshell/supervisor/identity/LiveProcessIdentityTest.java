package dev.openshell.supervisor.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.openshell.supervisor.identity.Identification.Cause;
import dev.openshell.supervisor.identity.Identification.Identified;
import dev.openshell.supervisor.identity.Identification.IntegrityViolation;
import dev.openshell.supervisor.identity.Identification.Unidentified;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ProcessIdentifier} on the real {@code /proc}: loopback connections from this JVM and from child processes
 * ({@code curl}, {@code python3}) to a server socket of this JVM, identified as the proxy would identify them.
 */
@EnabledOnOs(OS.LINUX)
class LiveProcessIdentityTest {
    private static final Path CURL = Path.of("/usr/bin/curl");
    private static final Path PYTHON = Path.of("/usr/bin/python3");

    @TempDir
    Path dir;
    private ServerSocket server;
    private final List<Process> children = new ArrayList<>();
    private final List<Socket> sockets = new ArrayList<>();
    private final ProcessIdentifier identifier = ProcessIdentifier.create(IdentityOptions.defaults());

    @BeforeEach
    void listen() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        server.setSoTimeout(20_000);
    }

    @AfterEach
    void stop() throws IOException, InterruptedException {
        for (Socket s : sockets) {
            s.close();
        }
        server.close();
        for (Process p : children) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Socket accept() throws IOException {
        Socket s = server.accept();
        sockets.add(s);
        return s;
    }

    private Identification identify(Socket accepted) {
        return identifier.identify((InetSocketAddress) accepted.getRemoteSocketAddress(),
                (InetSocketAddress) accepted.getLocalSocketAddress());
    }

    private Process start(String... command) throws IOException {
        Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        children.add(p);
        return p;
    }

    private Process curl(Path binary) throws IOException {
        return start(binary.toString(), "-s", "-o", "/dev/null", "-m", "20",
                "http://127.0.0.1:" + server.getLocalPort() + "/");
    }

    private static String self() throws IOException {
        return Files.readSymbolicLink(Path.of("/proc/self/exe")).toString();
    }

    @Test
    void aConnectionFromThisJvmIsThisJvm() throws IOException {
        // Java's sockets are dual-stack: this row is in tcp6, as ::ffff:127.0.0.1
        try (Socket client = new Socket(server.getInetAddress(), server.getLocalPort())) {
            Socket accepted = accept();
            ProcessIdentity p = assertInstanceOf(Identified.class, identify(accepted)).process();
            assertEquals(ProcessHandle.current().pid(), p.pid());
            assertEquals(self(), p.binary());
            assertEquals(64, p.sha256().length());
            assertTrue(client.isConnected());
        }
    }

    @Test
    void aConnectionOverIpv6LoopbackIsIdentified() throws IOException {
        InetAddress v6 = InetAddress.getByName("::1");
        ServerSocket six;
        try {
            six = new ServerSocket(0, 50, v6);
        } catch (IOException e) {
            assumeTrue(false, "no IPv6 loopback here");
            return;
        }
        try (six; Socket client = new Socket(v6, six.getLocalPort()); Socket accepted = six.accept()) {
            ProcessIdentity p = assertInstanceOf(Identified.class, identify(accepted)).process();
            assertEquals(ProcessHandle.current().pid(), p.pid());
            assertTrue(client.isConnected());
        }
    }

    @Test
    void curlIsCurlAndItsParentIsThisJvm() throws IOException {
        assumeTrue(Files.isExecutable(CURL), "needs curl");
        Process curl = curl(CURL);
        Socket accepted = accept(); // curl's own IPv4 socket: a row of tcp
        ProcessIdentity p = assertInstanceOf(Identified.class, identify(accepted)).process();
        assertEquals(curl.pid(), p.pid());
        assertEquals(CURL.toRealPath().toString(), p.binary());
        assertEquals(self(), p.ancestors().get(0).binary());
        assertEquals(ProcessHandle.current().pid(), p.ancestors().get(0).pid());
        assertEquals(curl.pid(), p.toOriginatingProcess().pid());
    }

    @Test
    void aPeerThatExitedIsNotIdentified() throws IOException, InterruptedException {
        assumeTrue(Files.isExecutable(CURL), "needs curl");
        Process curl = curl(CURL);
        Socket accepted = accept();
        curl.destroyForcibly();
        assertTrue(curl.waitFor(10, TimeUnit.SECONDS));
        Unidentified u = assertInstanceOf(Unidentified.class, identify(accepted));
        assertTrue(u.cause() == Cause.NO_SOCKET || u.cause() == Cause.NO_OWNER, u::toString);
        assertTrue(u.reason().startsWith("failed to resolve peer binary: "), u.reason());
    }

    @Test
    void aSocketSharedWithAnotherProgramIsAmbiguous() throws IOException {
        assumeTrue(Files.isExecutable(PYTHON), "needs python3");
        // python connects, then forks a child that keeps the socket across exec of sleep: two programs, one socket
        String script = String.join("\n",
                "import os, socket, sys",
                "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))",
                "s.set_inheritable(True)",
                "r, w = os.pipe()",
                "if os.fork() == 0:",
                "    os.close(r)",
                "    os.execv('/bin/sleep', ['sleep', '30'])",
                "os.close(w)",
                "os.read(r, 1)",
                "print('ready', flush=True)",
                "sys.stdin.read()");
        Process python = start(PYTHON.toString(), "-c", script, Integer.toString(server.getLocalPort()));
        Socket accepted = accept();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(python.getInputStream(),
                StandardCharsets.US_ASCII))) {
            assertEquals("ready", out.readLine(), "the child has exec'd sleep");
            Unidentified u = assertInstanceOf(Unidentified.class, identify(accepted));
            assertEquals(Cause.AMBIGUOUS_OWNERS, u.cause(), u::reason);
            assertTrue(u.reason().startsWith("ambiguous shared socket ownership: 2 processes"), u.reason());
        }
    }

    @Test
    void aDeletedBinaryKeepsItsPathAndAReplacedOneIsRefused() throws IOException {
        assumeTrue(Files.isExecutable(CURL) && Files.isExecutable(PYTHON), "needs curl and python3");
        Path client = dir.resolve("client");
        Files.copy(CURL, client);
        Process first = curl(client);
        Socket a = accept();
        ProcessIdentity trusted = assertInstanceOf(Identified.class, identify(a)).process();
        assertEquals(client.toString(), trusted.binary());
        assertEquals(first.pid(), trusted.pid());

        // the file is replaced under the running process: it is still the trusted program, at the same path
        Files.delete(client);
        ProcessIdentity deleted = assertInstanceOf(Identified.class, identify(a)).process();
        assertEquals(client.toString(), deleted.binary(), "' (deleted)' is removed when no such file exists");
        assertEquals(trusted.sha256(), deleted.sha256());

        // a new program at that path: python, not curl
        Files.copy(PYTHON.toRealPath(), client, StandardCopyOption.REPLACE_EXISTING);
        start(client.toString(), "-c", "import socket, sys, time\n"
                + "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\nsys.stdin.read()",
                Integer.toString(server.getLocalPort()));
        Socket b = accept();
        IntegrityViolation v = assertInstanceOf(IntegrityViolation.class, identify(b));
        assertEquals(client.toString(), v.binary());
        assertEquals(trusted.sha256(), v.trustedSha256());
    }
}
