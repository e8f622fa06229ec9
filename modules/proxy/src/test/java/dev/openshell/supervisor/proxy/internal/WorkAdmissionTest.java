package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The middleware work bound ({@link WorkAdmission}): permits up to the bound, a bounded queue served round-robin over
 * client addresses, shedding beyond it, and an interrupted waiter that leaves nothing behind.
 */
class WorkAdmissionTest {
    private static final InetAddress A = Loopback.A;
    private static final InetAddress B = Loopback.B;

    /** Waits (bounded) until {@code n} requests are queued: the waiting threads have reached the queue. */
    private static void awaitQueued(WorkAdmission w, int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (w.queued() != n) {
            assertTrue(System.nanoTime() < deadline, "queued " + w.queued() + ", expected " + n);
            Thread.onSpinWait();
        }
    }

    private static Thread waiter(WorkAdmission w, InetAddress client, String name, List<String> order) {
        return Thread.ofVirtual().start(() -> {
            try (WorkAdmission.Permit p = w.acquire(client)) {
                assertNotNull(p);
                order.add(name);
            } catch (InterruptedException e) {
                order.add(name + " interrupted");
            }
        });
    }

    @Test
    void permitsUpToTheBoundThenTheQueueThenShedding() throws Exception {
        WorkAdmission w = new WorkAdmission(2, 1);
        WorkAdmission.Permit p1 = w.acquire(A);
        WorkAdmission.Permit p2 = w.acquire(B);
        assertEquals(2, w.running());
        List<String> order = new CopyOnWriteArrayList<>();
        Thread queued = waiter(w, A, "queued", order);
        awaitQueued(w, 1);
        assertNull(w.acquire(B), "permits and queue full: shed at once");
        assertNull(w.acquire(A));
        p1.close();
        p1.close(); // a second close gives nothing back
        queued.join(30_000);
        assertEquals(List.of("queued"), order);
        assertEquals(1, w.running());
        p2.close();
        assertEquals(0, w.running());
        assertEquals(0, w.queued());
    }

    @Test
    void waitersAreServedRoundRobinOverAddresses() throws Exception {
        WorkAdmission w = new WorkAdmission(1, 10);
        WorkAdmission.Permit held = w.acquire(A);
        List<String> order = new CopyOnWriteArrayList<>();
        Thread a1 = waiter(w, A, "a1", order);
        awaitQueued(w, 1);
        Thread a2 = waiter(w, A, "a2", order);
        awaitQueued(w, 2);
        Thread a3 = waiter(w, A, "a3", order);
        awaitQueued(w, 3);
        Thread b1 = waiter(w, B, "b1", order);
        awaitQueued(w, 4);
        held.close();
        for (Thread t : List.of(a1, a2, a3, b1)) {
            t.join(30_000);
        }
        assertEquals(List.of("a1", "b1", "a2", "a3"), order, "b's one request does not wait behind all of a's");
        assertEquals(0, w.running());
    }

    @Test
    void anInterruptedWaiterLeavesTheQueue() throws Exception {
        WorkAdmission w = new WorkAdmission(1, 1);
        WorkAdmission.Permit held = w.acquire(A);
        List<String> order = new CopyOnWriteArrayList<>();
        Thread t = waiter(w, B, "b", order);
        awaitQueued(w, 1);
        t.interrupt();
        t.join(30_000);
        assertEquals(List.of("b interrupted"), order);
        assertEquals(0, w.queued());
        held.close();
        assertEquals(0, w.running());
        assertThrows(IllegalArgumentException.class, () -> new WorkAdmission(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new WorkAdmission(1, -1));
    }
}
