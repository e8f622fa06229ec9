package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.OriginatingProcess;
import dev.openshell.supervisor.identity.Identification;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link ClientConnection#revalidate}: the per-request check of a connection's identity, and its replacement. */
class ClientConnectionRevalidateTest {
    private static ConnectionIdentity of(String binary) {
        OriginatingProcess p = new OriginatingProcess(binary, 1, List.of());
        return new ConnectionIdentity(Optional.of(new Identification.Unidentified(Identification.Cause.NO_OWNER,
                binary)), Optional.of(p), Optional.of(p));
    }

    @Test
    void nothingHappensBeforeTheIdentityIsDecided() {
        ClientConnection c = ClientConnection.unknown();
        AtomicInteger checks = new AtomicInteger();
        assertEquals(Optional.empty(), c.revalidate(id -> checks.incrementAndGet() > 0, x -> of("x")));
        assertEquals(0, checks.get());
        assertTrue(c.identityIfDecided().isEmpty());
        assertFalse(c.reidentified());
    }

    @Test
    void anIdentityThatHoldsIsKept() {
        ClientConnection c = ClientConnection.unknown();
        ConnectionIdentity curl = c.identity(x -> of("/usr/bin/curl"));
        assertEquals(Optional.empty(), c.revalidate(id -> true, x -> of("/usr/bin/python3")));
        assertSame(curl, c.identityIfDecided().orElseThrow());
        assertFalse(c.reidentified());
    }

    @Test
    void anIdentityThatNoLongerHoldsIsDecidedAgainAndTheOldOneReturned() {
        ClientConnection c = ClientConnection.unknown();
        ConnectionIdentity curl = c.identity(x -> of("/usr/bin/curl"));
        AtomicInteger identified = new AtomicInteger();
        Optional<ConnectionIdentity> replaced = c.revalidate(id -> false, x -> {
            identified.incrementAndGet();
            return of("/usr/bin/python3");
        });
        assertSame(curl, replaced.orElseThrow());
        assertEquals("/usr/bin/python3", c.identityIfDecided().orElseThrow().process().orElseThrow().binary());
        assertSame(c.identityIfDecided().get(), c.identity(x -> of("never")), "the new identity is the memo");
        assertEquals(1, identified.get());
        assertTrue(c.reidentified(), "sticky: a tunnel admitted for the first identity is admitted again");
        c.revalidate(id -> true, x -> of("never"));
        assertTrue(c.reidentified());
    }
}
