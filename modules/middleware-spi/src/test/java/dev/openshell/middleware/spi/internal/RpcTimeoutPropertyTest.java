package dev.openshell.middleware.spi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.StringLength;

/** The one RPC timeout rule (formerly two copies, in policy and grpc, whose messages and formats differed). */
class RpcTimeoutPropertyTest {
    @Property
    void millisecondsAreAcceptedExactlyFrom10To30000(@ForAll @LongRange(min = 0, max = 100_000) long ms) {
        String text = ms + "ms";
        if (ms >= 10 && ms <= 30_000) {
            assertEquals(Duration.ofMillis(ms), RpcTimeout.parse(text));
            assertNull(RpcTimeout.problem(text));
            assertEquals(Duration.ofMillis(ms), RpcTimeout.parse(RpcTimeout.format(Duration.ofMillis(ms))));
            assertEquals(Duration.ofMillis(ms), RpcTimeout.check(Duration.ofMillis(ms)));
        } else {
            assertEquals("invalid timeout '" + text + "': it must be from 10ms to 30s",
                    assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(text)).getMessage());
            assertThrows(IllegalArgumentException.class, () -> RpcTimeout.check(Duration.ofMillis(ms)));
        }
    }

    @Property
    void secondsAreAcceptedExactlyFrom1To30(@ForAll @LongRange(min = 0, max = 1_000) long s) {
        assertEquals(s >= 1 && s <= 30, RpcTimeout.problem(s + "s") == null);
        if (s >= 1 && s <= 30) {
            assertEquals(Duration.ofSeconds(s), RpcTimeout.parse(s + "s"));
            assertEquals(s + "s", RpcTimeout.format(Duration.ofSeconds(s)));
        }
    }

    @Property
    void anythingButDigitsAndAUnitIsRejected(@ForAll @StringLength(max = 12) String text) {
        if (!text.matches("[0-9]{1,9}(ms|s)")) {
            assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(text));
        }
    }

    @Provide
    Arbitrary<String> malformed() {
        return Arbitraries.of("", "ms", "s", "-5s", "+5s", "5 s", "5S", "5m", "5min", "1.5s", "0x10ms", "\uff15s",
                "5ms ", " 5ms", "1000000000ms");
    }

    @Property
    void nearMissesAreRejected(@ForAll("malformed") String text) {
        assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(text));
    }

    @Property(tries = 50)
    void hugeNumbersDoNotOverflow(@ForAll @LongRange(min = 1_000_000_000L) long n) {
        assertEquals("it must be from 10ms to 30s", RpcTimeout.problem(n + "ms"));
        assertEquals("it must be from 10ms to 30s", RpcTimeout.problem(n + "s"));
    }

    @Example
    void fractionsOfAMillisecondAreRefused() {
        assertEquals("it must be a whole number of milliseconds", RpcTimeout.problem(Duration.ofNanos(10_500_000)));
        assertThrows(IllegalArgumentException.class, () -> RpcTimeout.check(Duration.ofNanos(10_500_000)));
    }

    @Example
    void defaultsAreThoseOfTheRfc() {
        assertEquals(Duration.ofMillis(500), RpcTimeout.DEFAULT);
        assertEquals(Duration.ofMillis(10), RpcTimeout.MIN);
        assertEquals(Duration.ofSeconds(30), RpcTimeout.MAX);
        assertEquals("500ms", RpcTimeout.format(RpcTimeout.DEFAULT));
    }

    @Example
    void untrustedTextIsEscapedAndCut() {
        String msg = assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse("\u001b[31mred\u001b[0m"))
                .getMessage();
        assertTrue(!msg.contains("\u001b") && msg.contains("\\u001B"), msg);
        String longMsg = assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse("9".repeat(500)))
                .getMessage();
        assertTrue(longMsg.length() < 200, longMsg);
    }
}
