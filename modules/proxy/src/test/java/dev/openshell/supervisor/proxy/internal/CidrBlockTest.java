package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.proxy.CidrBlock;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CidrBlockTest {
    @Test
    void parsesAndMatches() throws Exception {
        CidrBlock b = CidrBlock.parse("10.1.2.3/8");
        assertEquals("10.0.0.0/8", b.toString());
        assertTrue(b.contains(InetAddress.getByName("10.255.0.1")));
        assertFalse(b.contains(InetAddress.getByName("11.0.0.1")));
        assertFalse(b.contains(InetAddress.getByName("::ffff:0:a00:1")), "families never mix");
        assertTrue(CidrBlock.parse("192.168.1.7").contains(InetAddress.getByName("192.168.1.7")));
        assertFalse(CidrBlock.parse("192.168.1.7").contains(InetAddress.getByName("192.168.1.8")));
        assertTrue(CidrBlock.parse("fd00::/8").contains(InetAddress.getByName("fdff::1")));
        assertTrue(CidrBlock.parse("0.0.0.0/0").contains(InetAddress.getByName("8.8.8.8")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0/8", "example.com", "10.0.0.a", "::/129",
            "10.0.0.0/", "10.0.0.0/8/8", "1.2.3.4/0x8"})
    void rejects(String text) {
        assertThrows(IllegalArgumentException.class, () -> CidrBlock.parse(text));
    }
}
