package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * A borrowed connection does not keep its owner's identity (issue 39, item 8), through {@code supervisor run}: a
 * Python process copies a connection that a copy of {@code curl} opened to the proxy ({@code pidfd_getfd(2)}), kills
 * curl and sends its own request on it. Policy {@code curl_only} admits its hosts for the curl copy only, so the
 * request must be judged as Python's: 403, with a Detection Finding that names both processes, and nothing upstream.
 * Three connections: a plain keep-alive connection (curl's second transfer waits, {@code --rate}), a CONNECT tunnel
 * with plain HTTP inside, and a CONNECT tunnel with TLS inside, which Python starts itself with the supervisor CA
 * (curl opens the tunnel and waits on it, {@code -p telnet://}). A host admitted to both binaries serves the borrowed
 * connection, with the finding. Skipped where the kernel refuses {@code pidfd_getfd} (before Linux 5.6, or under a
 * ptrace restriction: which is what a sandbox should do, see docs/policy-reference.md "Binary scoping").
 */
@EnabledOnOs(OS.LINUX)
class BorrowedConnectionIT {
    static final String CURL_ONLY = "curl.test";
    static final String SHARED = "shared.test";
    /** The attacker: start curl, wait for its connection to the proxy, copy it, kill curl, send on the copy. */
    private static final String BORROW_PY = """
            import ctypes, os, signal, socket, ssl, subprocess, sys
            libc = ctypes.CDLL(None, use_errno=True)
            curl, proxy_port, mode, host, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], \\
                sys.argv[5], sys.argv[6]
            proxy = "http://127.0.0.1:%d" % proxy_port
            if mode == "keepalive":
                url = "http://%s:%s/first" % (host, port)
                cmd = [curl, "-q", "-sS", "-x", proxy, "--rate", "1/m", "-w", "%{stderr}done %{http_code}\\\\n",
                       "-o", "/dev/null", url, "-o", "/dev/null", url]
                ready = "done "
            else:
                cmd = [curl, "-q", "-sv", "-p", "-x", proxy, "telnet://%s:%s" % (host, port)]
                ready = "CONNECT tunnel established"
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            first = ""
            for line in p.stderr:
                line = line.decode(errors="replace").strip()
                if line.startswith(ready) or ready in line:
                    first = line
                    break
            pidfd = os.pidfd_open(p.pid)
            borrowed = None
            for fd in os.listdir("/proc/%d/fd" % p.pid):
                try:
                    if not os.readlink("/proc/%d/fd/%s" % (p.pid, fd)).startswith("socket:"):
                        continue
                except OSError:
                    continue
                mine = libc.syscall(438, pidfd, int(fd), 0)
                if mine < 0:
                    print("NOGETFD %d" % ctypes.get_errno())
                    p.kill()
                    sys.exit(0)
                s = socket.socket(fileno=mine)
                try:
                    peer = s.getpeername()
                    if isinstance(peer, tuple) and peer[1] == proxy_port:
                        borrowed = s
                        break
                except OSError:
                    pass
                s.detach()
                os.close(mine)
            print("FIRST %s" % first)
            print("CURL %d SELF %d" % (p.pid, os.getpid()))
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            borrowed.setblocking(True)
            borrowed.settimeout(30)
            if mode == "keepalive":
                request = "GET http://%s:%s/borrowed HTTP/1.1\\r\\nHost: %s:%s\\r\\n\\r\\n" % (host, port, host, port)
            else:
                request = "GET /borrowed HTTP/1.1\\r\\nHost: %s:%s\\r\\n\\r\\n" % (host, port)
            if mode == "tunnel-tls":
                borrowed = ssl.create_default_context(cafile=ca).wrap_socket(borrowed, server_hostname=host)
            borrowed.sendall(request.encode())
            answer = b""
            while b"\\r\\n" not in answer:
                chunk = borrowed.recv(4096)
                if not chunk:
                    break
                answer += chunk
            print("STATUS %s" % answer.decode(errors="replace").split("\\r\\n")[0])
            """;

    @TempDir
    static Path work;
    static Path curl;
    static Path python;
    static Path script;
    static RawUpstream plain;
    static RawUpstream tls;
    static StackProcess supervisor;

    /** What the attacker saw: its first transfer's line, both PIDs, the borrowed request's status line. */
    record Borrowed(String first, long curlPid, long selfPid, String status) {
        int code() {
            String[] parts = status.split(" ");
            return parts.length > 1 && parts[1].matches("\\d{3}") ? Integer.parseInt(parts[1]) : 0;
        }
    }

    @BeforeAll
    static void start() throws Exception {
        Path realPython = Path.of("/usr/bin/python3");
        assumeTrue(Files.isExecutable(realPython), "needs python3");
        Path bin = Files.createDirectories(work.resolve("bin"));
        curl = Files.copy(Curl.binary().toRealPath(), bin.resolve("curl"));
        python = Files.copy(realPython.toRealPath(), bin.resolve("python3"));
        script = Files.writeString(work.resolve("borrow.py"), BORROW_PY);
        L7EnforcementIT.LoopbackTls loopback = L7EnforcementIT.LoopbackTls.create(work, List.of(CURL_ONLY, SHARED));
        tls = loopback.tls();
        plain = RawUpstream.plain();
        Path gateway = Files.writeString(work.resolve("gateway.toml"), loopback.gateway());
        Path policy = Files.writeString(work.resolve("policy.yaml"), """
                version: 1
                network_policies:
                  curl_only:
                    endpoints: [{ host: %3$s, ports: [%1$d, %2$d] }]
                    binaries: [{ path: "%5$s" }]
                  shared:
                    endpoints: [{ host: %4$s, ports: [%1$d, %2$d] }]
                    binaries: [{ path: "%5$s" }, { path: "%6$s" }]
                """.formatted(plain.port(), tls.port(), CURL_ONLY, SHARED, curl, python));
        supervisor = StackProcess.start(work.resolve("supervisor"), policy, gateway, Map.of());
    }

    @AfterAll
    static void stop() throws Exception {
        for (AutoCloseable c : new AutoCloseable[] {supervisor, plain, tls}) {
            if (c != null) {
                c.close();
            }
        }
    }

    private static Borrowed borrow(String mode, String host, int port) throws Exception {
        Path ca = work.resolve("supervisor").resolve("state").resolve("ca").resolve("supervisor-ca.pem");
        List<String> cmd = new ArrayList<>(List.of(python.toString(), script.toString(), curl.toString(),
                Integer.toString(supervisor.port()), mode, host, Integer.toString(port), ca.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
        for (String v : List.of("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                "no_proxy", "NO_PROXY")) {
            pb.environment().remove(v);
        }
        Process p = pb.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the attacker did not finish");
        assumeTrue(!out.startsWith("NOGETFD"), "pidfd_getfd is refused here: " + out);
        String first = "";
        long curlPid = 0;
        long selfPid = 0;
        String status = "";
        for (String line : out.split("\n")) {
            if (line.startsWith("FIRST ")) {
                first = line.substring(6);
            } else if (line.startsWith("CURL ")) {
                String[] f = line.split(" ");
                curlPid = Long.parseLong(f[1]);
                selfPid = Long.parseLong(f[3]);
            } else if (line.startsWith("STATUS ")) {
                status = line.substring(7);
            }
        }
        assertTrue(curlPid > 0, "the attacker borrowed a connection: " + out);
        return new Borrowed(first, curlPid, selfPid, status);
    }

    /** {@return the finding that reports the connection's new process, for the attacker's PID} */
    private static JsonObject reidentified(Borrowed b) throws Exception {
        return supervisor.auditEvents().stream().filter(e -> e.getInt("class_uid") == 2004)
                .filter(e -> AuditLog.openshell(e).getString("code", "").equals("connection_reidentified"))
                .filter(e -> AuditLog.openshell(e).getJsonNumber("previous_pid").longValue() == b.curlPid())
                .findFirst().orElseThrow(() -> new AssertionError("no re-identification finding for curl "
                        + b.curlPid()));
    }

    private void assertBorrowedRequestDenied(String mode, RawUpstream up, int port) throws Exception {
        up.drain();
        int before = up.count();
        Borrowed b = borrow(mode, CURL_ONLY, port);
        if (mode.equals("keepalive")) {
            assertEquals("done 200", b.first(), "curl's own request on the connection was admitted");
            assertTrue(up.take().requestLine().startsWith("GET /first "));
        }
        assertEquals(403, b.code(), "the borrowed connection is judged as the process that now holds it: " + b);
        assertEquals(before + (mode.equals("keepalive") ? 1 : 0), up.count(), "nothing of the borrower went upstream");
        JsonObject f = reidentified(b);
        JsonObject os = AuditLog.openshell(f);
        assertEquals(curl.toString(), os.getString("previous_binary"));
        assertEquals(b.selfPid(), f.getJsonObject("actor").getJsonObject("process").getJsonNumber("pid")
                .longValue(), "the actor is the process that holds the socket now");
        assertEquals(python.toString(), f.getJsonObject("actor").getJsonObject("process").getJsonObject("file")
                .getString("path"));
    }

    @Test
    void aBorrowedKeepAliveConnectionIsJudgedAsItsNewHolder() throws Exception {
        assertBorrowedRequestDenied("keepalive", plain, plain.port());
    }

    @Test
    void aBorrowedTunnelWithPlainHttpInsideIsJudgedAsItsNewHolder() throws Exception {
        assertBorrowedRequestDenied("tunnel-plain", plain, plain.port());
    }

    @Test
    void aBorrowedInterceptedTlsTunnelIsJudgedAsItsNewHolder() throws Exception {
        assertBorrowedRequestDenied("tunnel-tls", tls, tls.port());
    }

    @Test
    void aHostBothBinariesMayUseServesTheNewHolderAndReportsTheChange() throws Exception {
        plain.drain();
        Borrowed b = borrow("keepalive", SHARED, plain.port());
        assertEquals(200, b.code(), b.toString());
        assertTrue(plain.take().requestLine().startsWith("GET /first "));
        assertTrue(plain.take().requestLine().startsWith("GET /borrowed "));
        JsonObject f = reidentified(b);
        assertEquals("Medium", f.getString("severity"));
        assertFalse(supervisor.auditText().contains("/borrowed?"), "no query in any event");
    }
}
