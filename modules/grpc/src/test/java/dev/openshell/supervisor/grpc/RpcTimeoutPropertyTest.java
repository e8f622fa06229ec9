package dev.openshell.supervisor.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

class RpcTimeoutPropertyTest {
    @Property
    void everyMillisecondValueInRangeParses(@ForAll @LongRange(min = 10, max = 30_000) long ms) {
        assertEquals(Duration.ofMillis(ms), RpcTimeout.parse(ms + "ms"));
        assertEquals(Duration.ofMillis(ms), RpcTimeout.parse(RpcTimeout.format(Duration.ofMillis(ms))));
    }

    @Property
    void secondsInRangeParse(@ForAll @LongRange(min = 1, max = 30) long s) {
        assertEquals(Duration.ofSeconds(s), RpcTimeout.parse(s + "s"));
    }

    @Property
    void valuesOutOfRangeAreRefused(@ForAll @LongRange(min = 0, max = 999_999_999) long n) {
        if (n < 10 || n > 30_000) {
            assertTrue(assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(n + "ms")).getMessage()
                    .contains("outside"));
        }
        if (n == 0 || n > 30) {
            assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(n + "s"));
        }
    }

    @Property
    void anythingButDigitsAndOneUnitIsRefused(@ForAll("malformed") String text) {
        assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse(text));
    }

    @Provide
    Arbitrary<String> malformed() {
        Arbitrary<String> junk = Arbitraries.strings().ofMaxLength(12)
                .filter(s -> !s.matches("[0-9]{1,9}(ms|s)"));
        return Arbitraries.oneOf(junk, Arbitraries.of("", "ms", "s", "-5s", "+5s", "5 s", "5S", "5m", "5min", "1.5s",
                "0x10ms", "５s", "5ms ", " 5ms", "1000000000ms"));
    }

    @Example
    void untrustedTextIsNotEchoedWhenLongOrUnprintable() {
        String msg = assertThrows(IllegalArgumentException.class, () -> RpcTimeout.parse("\u001b[31mred\u001b[0m"))
                .getMessage();
        assertTrue(!msg.contains("\u001b") && msg.contains("characters"), msg);
    }
}
