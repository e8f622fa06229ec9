package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;

import org.junit.jupiter.api.Test;

class IpRangeTest {
    @Test
    void parsesAndNormalisesRanges() {
        assertEquals("10.0.0.0/8", IpRange.parse("10.1.2.3/8").toString());
        assertEquals("192.168.1.7/32", IpRange.parse("192.168.1.7").toString());
        assertEquals("fd00:0:0:0:0:0:0:0/8", IpRange.parse("fd12::1/8").toString());
        assertEquals("0:0:0:0:0:0:0:1/128", IpRange.parse("::1").toString());
        assertEquals(IpRange.parse("10.0.0.0/8"), IpRange.parse("10.255.255.255/8"));
        assertFalse(IpRange.parse("::ffff:10.0.0.1").isIpv4(), "a mapped address stays in the IPv6 family");
    }

    @Test
    void containsAndOverlaps() {
        IpRange ten = IpRange.parse("10.0.0.0/8");
        assertTrue(ten.contains(IpRange.parseAddress("10.200.0.1")));
        assertFalse(ten.contains(IpRange.parseAddress("11.0.0.1")));
        assertFalse(ten.contains(IpRange.parseAddress("::1")));
        assertTrue(ten.overlaps(IpRange.parse("10.1.0.0/16")));
        assertTrue(IpRange.parse("10.1.0.0/16").overlaps(ten));
        assertFalse(ten.overlaps(IpRange.parse("fd00::/8")));
        assertTrue(IpRange.parse("0.0.0.0/0").contains(IpRange.parseAddress("203.0.113.9")));
        assertTrue(IpRange.parse("fe80::/10").contains(IpRange.parseAddress("febf::1")));
        assertFalse(IpRange.parse("fe80::/10").contains(IpRange.parseAddress("fec0::1")));
    }

    @Test
    void neverLooksUpNamesAndRejectsLooseForms() {
        for (String s : List.of("localhost", "example.com", "1.2.3", "01.2.3.4", "1.2.3.256", "1.2.3.4.5", "",
                "::1%eth0", "[::1]", ".::1", "1.2.3.4 ", "0x7f.0.0.1", "fe80::zz")) {
            assertNull(IpRange.parseAddress(s), s);
        }
        assertEquals("invalid address range '10.0.0.0/': the prefix length must be a number from 0 to 32",
                assertThrows(IllegalArgumentException.class, () -> IpRange.parse("10.0.0.0/")).getMessage());
        assertEquals("invalid address range '::1/129': the prefix length must be a number from 0 to 128",
                assertThrows(IllegalArgumentException.class, () -> IpRange.parse("::1/129")).getMessage());
        assertEquals("invalid address range 'db/8': it is not an IPv4 or IPv6 address",
                assertThrows(IllegalArgumentException.class, () -> IpRange.parse("db/8")).getMessage());
    }

    @Test
    void listenAddresses() throws Exception {
        assertEquals(InetAddress.getByName("127.0.0.1"),
                dev.openshell.supervisor.policy.gateway.ListenAddress.parse("127.0.0.1:0").address());
        assertEquals("invalid listen address '0.0.0.0:65536': the port must be a number from 0 to 65535",
                assertThrows(IllegalArgumentException.class,
                        () -> dev.openshell.supervisor.policy.gateway.ListenAddress.parse("0.0.0.0:65536"))
                        .getMessage());
        assertEquals("invalid listen address 'proxy.internal:3128': the host must be an IP address or localhost",
                assertThrows(IllegalArgumentException.class,
                        () -> dev.openshell.supervisor.policy.gateway.ListenAddress.parse("proxy.internal:3128"))
                        .getMessage());
        assertEquals("invalid listen address '::1:3128': write it as host:port, with an IPv6 host in brackets"
                        + " ([::1]:3128)",
                assertThrows(IllegalArgumentException.class,
                        () -> dev.openshell.supervisor.policy.gateway.ListenAddress.parse("::1:3128")).getMessage());
        assertEquals("localhost:0", dev.openshell.supervisor.policy.gateway.ListenAddress.parse("localhost:0")
                .toString());
    }
}
