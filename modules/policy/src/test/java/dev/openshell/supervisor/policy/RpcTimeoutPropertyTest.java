package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.StringLength;

class RpcTimeoutPropertyTest {
    @Property
    void millisecondsAreAcceptedExactlyFrom10To30000(@ForAll @LongRange(min = 0, max = 100_000) long ms) {
        String text = ms + "ms";
        if (ms >= 10 && ms <= 30_000) {
            assertEquals(Duration.ofMillis(ms), RpcTimeout.parse(text));
            assertNull(RpcTimeout.problem(text));
        } else {
            assertEquals("invalid timeout '" + text + "': it must be from 10ms to 30s",
                    assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(text)).getMessage());
        }
    }

    @Property
    void secondsAreAcceptedExactlyFrom1To30(@ForAll @LongRange(min = 0, max = 1_000) long s) {
        assertEquals(s >= 1 && s <= 30, RpcTimeout.problem(s + "s") == null);
        if (s >= 1 && s <= 30) {
            assertEquals(Duration.ofSeconds(s), RpcTimeout.parse(s + "s"));
            assertEquals(RpcTimeout.parse(s + "s"), RpcTimeout.parse(RpcTimeout.format(RpcTimeout.parse(s + "s"))));
        }
    }

    @Property
    void anythingButDigitsAndAUnitIsRejected(@ForAll @StringLength(max = 12) String text) {
        boolean wellFormed = text.matches("[0-9]{1,9}(ms|s)");
        if (!wellFormed) {
            assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(text));
        }
    }

    @Property(tries = 50)
    void hugeNumbersDoNotOverflow(@ForAll @LongRange(min = 1_000_000_000L) long n) {
        assertEquals("it must be from 10ms to 30s", RpcTimeout.problem(n + "ms"));
        assertEquals("it must be from 10ms to 30s", RpcTimeout.problem(n + "s"));
    }

    @Property(tries = 10)
    void defaultsAreThoseOfTheRfc(@ForAll boolean unused) {
        assertEquals(Duration.ofMillis(500), RpcTimeout.DEFAULT);
        assertEquals(Duration.ofMillis(10), RpcTimeout.MIN);
        assertEquals(Duration.ofSeconds(30), RpcTimeout.MAX);
        assertEquals("500ms", RpcTimeout.format(RpcTimeout.DEFAULT));
    }
}
