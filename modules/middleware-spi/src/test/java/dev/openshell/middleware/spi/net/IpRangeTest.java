package dev.openshell.middleware.spi.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.net.InetAddress;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The one CIDR type of the supervisor ({@code allowed_ips} in the policy, the SSRF guard in the proxy). */
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

    /** Cases of the proxy's former copy ({@code CidrBlock}), now served by this one type. */
    @Test
    void theProxysCasesHold() throws Exception {
        IpRange b = IpRange.parse("10.1.2.3/8");
        assertEquals("10.0.0.0/8", b.toString());
        assertTrue(b.contains(InetAddress.getByName("10.255.0.1")));
        assertFalse(b.contains(InetAddress.getByName("11.0.0.1")));
        assertFalse(b.contains(InetAddress.getByName("::ffff:0:a00:1")), "families never mix");
        assertTrue(IpRange.parse("192.168.1.7").contains(InetAddress.getByName("192.168.1.7")));
        assertFalse(IpRange.parse("192.168.1.7").contains(InetAddress.getByName("192.168.1.8")));
        assertTrue(IpRange.parse("fd00::/8").contains(InetAddress.getByName("fdff::1")));
        assertTrue(IpRange.parse("0.0.0.0/0").contains(InetAddress.getByName("8.8.8.8")));
        for (String text : List.of("", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0/8", "example.com", "10.0.0.a", "::/129",
                "10.0.0.0/", "10.0.0.0/8/8", "1.2.3.4/0x8")) {
            assertThrows(IllegalArgumentException.class, () -> IpRange.parse(text), text);
        }
    }

    /** The policy loader and the proxy share this type, so no text round trip sits between them; it is lossless. */
    @Property
    void toStringParsesBackToTheSameRange(@ForAll("ranges") IpRange r) {
        assertEquals(r, IpRange.parse(r.toString()));
    }

    /** {@code contains} agrees with prefix arithmetic on the address as an unsigned number. */
    @Property
    void containsIsPrefixArithmetic(@ForAll("ranges") IpRange r, @ForAll byte[] raw) throws Exception {
        int len = r.network().getAddress().length;
        byte[] bytes = java.util.Arrays.copyOf(raw, len);
        InetAddress a = len == 4 ? InetAddress.getByAddress(bytes) : java.net.Inet6Address.getByAddress(null, bytes, null);
        int bits = len * 8;
        BigInteger shift = BigInteger.ONE.shiftLeft(bits - r.prefixLength());
        boolean expected = new BigInteger(1, bytes).divide(shift)
                .equals(new BigInteger(1, r.network().getAddress()).divide(shift));
        assertEquals(expected, r.contains(a), r + " " + a);
        assertTrue(r.contains(r.network()));
    }

    @Provide
    Arbitrary<IpRange> ranges() {
        Arbitrary<IpRange> v4 = Combinators.combine(Arbitraries.bytes().array(byte[].class).ofSize(4),
                Arbitraries.integers().between(0, 32)).as((b, p) -> new IpRange(address(b), p));
        Arbitrary<IpRange> v6 = Combinators.combine(Arbitraries.bytes().array(byte[].class).ofSize(16),
                Arbitraries.integers().between(0, 128)).as((b, p) -> new IpRange(address(b), p));
        return Arbitraries.oneOf(v4, v6);
    }

    private static InetAddress address(byte[] b) {
        try {
            return b.length == 4 ? InetAddress.getByAddress(b) : java.net.Inet6Address.getByAddress(null, b, null);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }
}
