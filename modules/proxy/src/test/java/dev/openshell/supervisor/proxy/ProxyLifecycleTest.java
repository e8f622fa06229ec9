package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.proxy.internal.CertificateAuthority;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Start, stop, bind failures and CA handling. */
class ProxyLifecycleTest {
    @TempDir
    Path tmp;

    private SupervisorProxy.Builder builder() {
        return SupervisorProxy.builder()
                .listen(new InetSocketAddress("127.0.0.1", 0))
                .stateDirectory(tmp.resolve("state"))
                .admission((h, p, c) -> AdmissionDecision.allow(EndpointFacts.of("all")));
    }

    @Test
    void bindFailureIsReportedNotIgnored() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            SupervisorProxy p = builder().listen(new InetSocketAddress("127.0.0.1", taken.getLocalPort())).build();
            ProxyException e = assertThrows(ProxyException.class, p::start);
            assertEquals("the proxy cannot listen on 127.0.0.1:" + taken.getLocalPort() + ": address already in use",
                    e.getMessage());
        }
    }

    @Test
    void builderNeedsAdmissionAndCaSource() {
        assertThrows(IllegalStateException.class, () -> SupervisorProxy.builder().stateDirectory(tmp).build());
        assertThrows(IllegalStateException.class, () -> SupervisorProxy.builder()
                .admission((h, p, c) -> AdmissionDecision.deny("x")).build());
    }

    @Test
    void stopLetsAnInFlightRequestFinish() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        try (TestUpstream up = TestUpstream.plain()) {
            up.respond(r -> {
                try {
                    release.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return TestUpstream.ok("finished");
            });
            SupervisorProxy proxy = builder()
                    .network(new NetworkSettings(true, Map.of("api.example.test", InetAddress.getByName("127.0.0.1"))))
                    .stopGracePeriod(Duration.ofSeconds(20))
                    .build();
            int port = proxy.start();
            try (RawClient c = new RawClient(port)) {
                c.send("GET http://api.example.test:" + up.port() + "/slow HTTP/1.1\r\nHost: api.example.test:"
                        + up.port() + "\r\n\r\n");
                up.take(); // the request is in flight at the upstream
                Thread stopper = Thread.ofVirtual().start(proxy::stop);
                awaitRefused(port); // the listener is closed: stop() has begun
                release.countDown();
                RawClient.Response r = c.read();
                assertEquals(200, r.status());
                assertEquals("finished", r.bodyText());
                stopper.join(Duration.ofSeconds(30));
                assertTrue(!stopper.isAlive(), "stop() returns once the request finished");
            }
            assertEquals(-1, proxy.port());
        }
    }

    @Test
    void stopIsBoundedWhenARequestHangs() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        try (TestUpstream up = TestUpstream.plain()) {
            up.respond(r -> {
                try {
                    never.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return null;
            });
            SupervisorProxy proxy = builder()
                    .network(new NetworkSettings(true, Map.of("api.example.test", InetAddress.getByName("127.0.0.1"))))
                    .stopGracePeriod(Duration.ofMillis(500))
                    .build();
            int port = proxy.start();
            try (RawClient c = new RawClient(port)) {
                c.send("GET http://api.example.test:" + up.port() + "/hang HTTP/1.1\r\nHost: api.example.test:"
                        + up.port() + "\r\n\r\n");
                up.take();
                Thread stopper = Thread.ofVirtual().start(proxy::stop);
                stopper.join(Duration.ofSeconds(30));
                assertTrue(!stopper.isAlive(), "stop() must return after the grace period");
                assertTrue(c.closedByPeer(), "the hanging client connection is closed");
            } finally {
                never.countDown();
            }
        }
    }

    @Test
    void operatorCaIsUsedAndAMismatchedKeyIsRefused() throws Exception {
        CertificateAuthority a = CertificateAuthority.loadOrCreate(tmp.resolve("a"));
        CertificateAuthority.loadOrCreate(tmp.resolve("b"));
        Path certA = tmp.resolve("a/ca").resolve(CertificateAuthority.CERT_FILE);
        Path keyA = tmp.resolve("a/ca").resolve(CertificateAuthority.KEY_FILE);
        Path keyB = tmp.resolve("b/ca").resolve(CertificateAuthority.KEY_FILE);
        SupervisorProxy ok = SupervisorProxy.builder().listen(new InetSocketAddress("127.0.0.1", 0))
                .operatorCa(certA, keyA).admission((h, p, c) -> AdmissionDecision.deny("x")).build();
        ok.start();
        try {
            assertEquals(a.certificate(), ok.caCertificate());
        } finally {
            ok.stop();
        }
        SupervisorProxy bad = SupervisorProxy.builder().listen(new InetSocketAddress("127.0.0.1", 0))
                .operatorCa(certA, keyB).admission((h, p, c) -> AdmissionDecision.deny("x")).build();
        ProxyException e = assertThrows(ProxyException.class, bad::start);
        assertTrue(e.getMessage().contains("does not match"), e.getMessage());
    }

    @Test
    void generatedCaKeyIsPrivateAndIncompleteStateIsRefused() throws Exception {
        CertificateAuthority.loadOrCreate(tmp.resolve("s"));
        Path key = tmp.resolve("s/ca").resolve(CertificateAuthority.KEY_FILE);
        assertEquals("rw-------", java.nio.file.attribute.PosixFilePermissions.toString(
                Files.getPosixFilePermissions(key)));
        assertTrue(CertificateAuthority.readCertificate(tmp.resolve("s/ca").resolve(CertificateAuthority.CERT_FILE))
                .getBasicConstraints() >= 0);
        Files.delete(key);
        IOException e = assertThrows(IOException.class, () -> CertificateAuthority.loadOrCreate(tmp.resolve("s")));
        assertTrue(e.getMessage().contains("incomplete"), e.getMessage());
    }

    private static void awaitRefused(int port) {
        for (int i = 0; i < 100_000; i++) {
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
            } catch (ConnectException e) {
                return;
            } catch (IOException e) {
                // try again
            }
            Thread.yield();
        }
        throw new AssertionError("the listener never closed");
    }
}
