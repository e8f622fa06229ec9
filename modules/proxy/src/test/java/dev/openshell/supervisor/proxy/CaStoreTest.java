package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Instant;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CA files {@code supervisor ca export} and {@code supervisor ca rotate} work on. */
class CaStoreTest {
    @TempDir
    Path state;

    @Test
    void theFirstLoadCreatesTheCaAndLaterLoadsReturnTheSameOne() throws IOException {
        CaStore.CaCertificate created = CaStore.loadOrCreate(state);
        assertTrue(created.created());
        assertEquals(state.resolve("ca").resolve("supervisor-ca.pem"), created.certificateFile());
        assertTrue(created.certificate().getBasicConstraints() >= 0, "a CA certificate");
        CaStore.CaCertificate again = CaStore.loadOrCreate(state);
        assertFalse(again.created());
        assertEquals(created.certificate(), again.certificate());
        assertEquals(created.pem(), Files.readString(created.certificateFile()));
        assertTrue(created.pem().startsWith("-----BEGIN CERTIFICATE-----"));
        assertFalse(created.pem().contains("PRIVATE"));
    }

    @Test
    void theProxyUsesTheCaTheStoreCreated() throws IOException {
        CaStore.CaCertificate ca = CaStore.loadOrCreate(state);
        try (SupervisorProxy proxy = SupervisorProxy.builder().listen(new java.net.InetSocketAddress("127.0.0.1", 0))
                .stateDirectory(state).admission((h, p, c) -> AdmissionDecision.deny("none")).build()) {
            proxy.start();
            assertEquals(ca.certificate(), proxy.caCertificate());
        }
    }

    @Test
    void rotationReplacesTheCaAndKeepsACopyOfTheOldFiles() throws IOException {
        CaStore.CaCertificate old = CaStore.loadOrCreate(state);
        String oldKey = Files.readString(state.resolve("ca").resolve(CaStore.KEY_FILE));
        CaStore.Rotation r = CaStore.rotate(state, Instant.parse("2026-11-29T21:37:02Z"));
        assertNotEquals(old.certificate(), r.certificate().certificate());
        Path previous = r.previous().orElseThrow();
        assertEquals(state.resolve("ca/previous/20261129T213702Z"), previous);
        assertEquals(old.pem(), Files.readString(previous.resolve(CaStore.CERT_FILE)));
        assertEquals(oldKey, Files.readString(previous.resolve(CaStore.KEY_FILE)));
        if (Files.getFileStore(state).supportsFileAttributeView("posix")) {
            Set<PosixFilePermission> owner = Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);
            assertEquals(owner, Files.getPosixFilePermissions(previous.resolve(CaStore.KEY_FILE)));
            assertEquals(owner, Files.getPosixFilePermissions(state.resolve("ca").resolve(CaStore.KEY_FILE)));
        }
        CaStore.CaCertificate now = CaStore.loadOrCreate(state);
        assertFalse(now.created());
        assertEquals(r.certificate().certificate(), now.certificate(), "the new key matches the new certificate");
        try (var files = Files.list(state.resolve("ca"))) {
            assertTrue(files.noneMatch(p -> p.getFileName().toString().endsWith(".new")), "no temporary files left");
        }
    }

    @Test
    void rotationWithoutAnExistingCaCreatesOneAndHasNothingToBackUp() throws IOException {
        CaStore.Rotation r = CaStore.rotate(state, Instant.now());
        assertTrue(r.previous().isEmpty());
        assertEquals(r.certificate().certificate(), CaStore.loadOrCreate(state).certificate());
    }

    @Test
    void twoRotationsInTheSameSecondDoNotOverwriteTheBackup() throws IOException {
        Instant t = Instant.parse("2026-11-29T21:37:02Z");
        CaStore.rotate(state, t);
        CaStore.rotate(state, t.plusSeconds(1));
        assertThrows(IOException.class, () -> CaStore.rotate(state, t.plusSeconds(1)));
    }

    @Test
    void anIncompleteCaIsAnErrorNamingTheFiles() throws IOException {
        CaStore.loadOrCreate(state);
        Files.delete(state.resolve("ca").resolve(CaStore.KEY_FILE));
        IOException e = assertThrows(IOException.class, () -> CaStore.loadOrCreate(state));
        assertTrue(e.getMessage().contains(CaStore.KEY_FILE), e.getMessage());
    }

    @Test
    void anOperatorCaMustMatchItsKey() throws IOException {
        Path a = state.resolve("a");
        Path b = state.resolve("b");
        CaStore.loadOrCreate(a);
        CaStore.loadOrCreate(b);
        Path cert = a.resolve("ca").resolve(CaStore.CERT_FILE);
        assertEquals(CaStore.readCertificate(cert), CaStore.loadOperatorCa(cert,
                a.resolve("ca").resolve(CaStore.KEY_FILE)).certificate());
        IOException e = assertThrows(IOException.class, () -> CaStore.loadOperatorCa(cert,
                b.resolve("ca").resolve(CaStore.KEY_FILE)));
        assertTrue(e.getMessage().contains("does not match"), e.getMessage());
        IOException missing = assertThrows(IOException.class, () -> CaStore.readCertificate(state.resolve("nope")));
        assertTrue(missing.getMessage().contains("nope"), missing.getMessage());
    }
}
