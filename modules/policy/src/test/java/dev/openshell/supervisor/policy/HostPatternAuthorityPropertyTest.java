package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.UnknownHostException;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Over random names, ports and IPv6 addresses: a host pattern with a port ({@code name:443}, {@code name:*}) is
 * always refused with the port named as the reason, and an IPv6 address written without brackets (full or
 * {@code ::}-compressed, any case) is always a valid pattern, so the port rule never rejects what the IPv6 rule
 * accepts.
 */
class HostPatternAuthorityPropertyTest {
    @Provide
    Arbitrary<String> host() {
        return HostArbitraries.dnsHost();
    }

    @Provide
    Arbitrary<String> port() {
        return Arbitraries.oneOf(Arbitraries.integers().between(0, 99_999).map(String::valueOf),
                Arbitraries.of("*", "0443", "?", "8*"));
    }

    @Provide
    Arbitrary<byte[]> ipv6() {
        return Arbitraries.bytes().array(byte[].class).ofSize(16);
    }

    @Property(tries = 500)
    void aPortIsAlwaysRefusedAsAPort(@ForAll("host") String host, @ForAll("port") String port) {
        String problem = HostPattern.problem(host + ":" + port);
        assertTrue(problem != null && problem.startsWith("it has a port (':" + port + "')"), problem);
        String wild = HostPattern.problem("*." + host + ":" + port);
        assertTrue(wild != null && wild.startsWith("it has a port"), wild);
    }

    @Property(tries = 500)
    void ipv6AddressesStayValid(@ForAll("ipv6") byte[] address, @ForAll boolean upper) throws UnknownHostException {
        String full = InetAddress.getByAddress(address).getHostAddress(); // an IPv4-mapped one comes back as IPv4
        String compressed = full.replaceFirst("(^|:)0(:0)+(:|$)", "::");
        for (String form : new String[] {full, compressed, compressed.replaceFirst("[0-9a-f]+$", "*")}) {
            String written = upper ? form.toUpperCase(java.util.Locale.ROOT) : form;
            assertNull(HostPattern.problem(written), written);
        }
    }
}
