package dev.openshell.middleware.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class BodyTest {
    @Test
    void copiesInAndOut() {
        byte[] raw = {1, 2, 3};
        Body body = Body.of(raw);
        raw[0] = 9;
        byte[] out = body.toByteArray();
        out[1] = 9;
        assertArrayEquals(new byte[] {1, 2, 3}, body.toByteArray());
        assertTrue(body.asReadOnlyBuffer().isReadOnly());
    }

    @Test
    void atLimitIsAcceptedOverLimitIsRejected() {
        assertEquals(EnvelopeLimits.MAX_BODY_BYTES, Body.ofOwned(new byte[EnvelopeLimits.MAX_BODY_BYTES]).size());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Body.ofOwned(new byte[EnvelopeLimits.MAX_BODY_BYTES + 1]));
        assertEquals("body of 4194305 bytes exceeds the 4194304-byte platform maximum", e.getMessage());
    }

    @Test
    void strictUtf8() {
        assertEquals(Optional.of("héllo"), Body.ofUtf8("héllo").utf8());
        assertEquals(Optional.empty(), Body.of(new byte[] {(byte) 0xC3, (byte) 0x28}).utf8());
    }

    @Test
    void toStringNeverShowsContent() {
        assertEquals("Body[6 bytes]", Body.ofUtf8("sk-abc").toString());
    }
}
