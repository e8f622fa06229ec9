package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.openshell.middleware.spi.net.IpRange;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.NetworkSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The SSRF table: host spelling, address class, and what unblocks it. */
class SsrfGuardTest {
    private static final EndpointFacts PLAIN = EndpointFacts.of("p");
    private static final EndpointFacts ALLOW_PRIVATE = new EndpointFacts("p", false,
            List.of(IpRange.parse("10.0.0.0/8"), IpRange.parse("100.64.0.0/10"), IpRange.parse("fd00::/8"),
                    IpRange.parse("169.254.0.0/16"), IpRange.parse("127.0.0.0/8"), IpRange.parse("192.168.1.7")),
            Optional.empty());

    /** host as written, expected normalised host, verdict without allowed_ips, verdict with allowed_ips. */
    static Stream<Arguments> table() {
        return Stream.of(
                row("93.184.215.14", "93.184.215.14", "ok", "ok"),
                row("[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "ok", "ok"),
                row("127.0.0.1", "127.0.0.1", "a loopback address", "a loopback address"),
                row("127.1", "127.0.0.1", "a loopback address", "a loopback address"),
                row("2130706433", "127.0.0.1", "a loopback address", "a loopback address"),
                row("0x7f.1", "127.0.0.1", "a loopback address", "a loopback address"),
                row("0x7f000001", "127.0.0.1", "a loopback address", "a loopback address"),
                row("0177.0.0.1", "127.0.0.1", "a loopback address", "a loopback address"),
                row("127.0.0.1.", "127.0.0.1", "a loopback address", "a loopback address"),
                row("[::1]", "::1", "a loopback address", "a loopback address"),
                row("[::ffff:127.0.0.1]", "127.0.0.1", "a loopback address", "a loopback address"),
                row("[::ffff:7f00:1]", "127.0.0.1", "a loopback address", "a loopback address"),
                row("[0:0:0:0:0:ffff:a9fe:a9fe]", "169.254.169.254", "a cloud metadata address", "a cloud metadata address"),
                row("0", "0.0.0.0", "an unspecified address", "an unspecified address"),
                row("[::]", "::", "an unspecified address", "an unspecified address"),
                row("169.254.169.254", "169.254.169.254", "a cloud metadata address", "a cloud metadata address"),
                row("2852039166", "169.254.169.254", "a cloud metadata address", "a cloud metadata address"),
                row("169.254.170.2", "169.254.170.2", "a cloud metadata address", "a cloud metadata address"),
                row("100.100.100.200", "100.100.100.200", "a cloud metadata address", "a cloud metadata address"),
                row("168.63.129.16", "168.63.129.16", "a cloud metadata address", "a cloud metadata address"),
                row("[fd00:ec2::254]", "fd00:ec2::254", "a cloud metadata address", "a cloud metadata address"),
                row("169.254.1.1", "169.254.1.1", "a link-local address", "a link-local address"),
                row("[fe80::1]", "fe80::1", "a link-local address", "a link-local address"),
                row("10.1.2.3", "10.1.2.3", "a private address", "ok"),
                row("012.1.2.3", "10.1.2.3", "a private address", "ok"),
                row("172.16.0.1", "172.16.0.1", "a private address", "a private address"),
                row("172.31.255.255", "172.31.255.255", "a private address", "a private address"),
                row("172.32.0.1", "172.32.0.1", "ok", "ok"),
                row("192.168.1.7", "192.168.1.7", "a private address", "ok"),
                row("192.168.1.8", "192.168.1.8", "a private address", "a private address"),
                row("100.64.0.1", "100.64.0.1", "a carrier-grade NAT address", "ok"),
                row("[fd12:3456::1]", "fd12:3456::1", "a unique local address", "ok"),
                row("[fc00::1]", "fc00::1", "a unique local address", "a unique local address"),
                row("[::ffff:10.0.0.1]", "10.0.0.1", "a private address", "ok"),
                row("[64:ff9b::a00:1]", "64:ff9b::a00:1", "a private address", "ok"),
                row("[2002:a00:1::1]", "2002:a00:1::1", "a private address", "ok"),
                // SIIT IPv4-translated ::ffff:0:0:0/96 (RFC 2765)
                row("[::ffff:0:7f00:1]", "::ffff:0:7f00:1", "a loopback address", "a loopback address"),
                row("[::ffff:0:a9fe:a9fe]", "::ffff:0:a9fe:a9fe", "a cloud metadata address",
                        "a cloud metadata address"),
                row("[::ffff:0:a00:1]", "::ffff:0:a00:1", "a private address", "ok"),
                row("[::ffff:0:5db8:d70e]", "::ffff:0:5db8:d70e", "ok", "ok"),
                // NAT64 well-known prefix: only the /96 layout (RFC 6052 section 2.1)
                row("[64:ff9b::7f00:1]", "64:ff9b::7f00:1", "a loopback address", "a loopback address"),
                row("[64:ff9b::5db8:d70e]", "64:ff9b::5db8:d70e", "ok", "ok"),
                // NAT64 local-use prefix 64:ff9b:1::/48: every RFC 6052 layout is read; the worst one decides
                row("[64:ff9b:1:a9fe:a9:fe08:808:808]", "64:ff9b:1:a9fe:a9:fe08:808:808", "a cloud metadata address",
                        "a cloud metadata address"),                   // the /48 layout reads 169.254.169.254
                row("[64:ff9b:1:5db8:a:0:108:808]", "64:ff9b:1:5db8:a:0:108:808", "a private address",
                        "ok"),                                          // the /64 layout reads 10.0.0.1
                row("[64:ff9b:1:5db8:5d:b8d7:e5d:b8d7]", "64:ff9b:1:5db8:5d:b8d7:e5d:b8d7", "ok", "ok"), // all public
                row("[64:ff9b:1:7f00:0:100:808:808]", "64:ff9b:1:7f00:0:100:808:808", "an unspecified address",
                        "an unspecified address"),                      // /48 is 127.0.0.1, /56 is 0.0.1.0
                row("[64:ff9b:1::808:808]", "64:ff9b:1::808:808", "an unspecified address",
                        "an unspecified address"),
                row("[2002:5db8:d70e::1]", "2002:5db8:d70e::1", "ok", "ok"),
                row("224.0.0.1", "224.0.0.1", "a multicast address", "a multicast address"),
                row("[ff02::1]", "ff02::1", "a multicast address", "a multicast address"),
                row("255.255.255.255", "255.255.255.255", "a reserved address", "a reserved address"),
                row("240.0.0.1", "240.0.0.1", "a reserved address", "a reserved address"),
                row("192.0.2.1", "192.0.2.1", "a special-purpose address", "a special-purpose address"),
                row("[2001:db8::1]", "2001:db8::1", "a special-purpose address", "a special-purpose address"),
                row("198.18.0.1", "198.18.0.1", "a special-purpose address", "a special-purpose address"));
    }

    private static Arguments row(String host, String normalised, String plain, String withAllowed) {
        return Arguments.of(host, normalised, plain, withAllowed);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void table(String host, String normalised, String plain, String withAllowed) throws Exception {
        Authority a = Authority.parse(host, 80);
        assertEquals(normalised, a.host());
        SsrfGuard guard = new SsrfGuard(NetworkSettings.defaults(), name -> {
            throw new AssertionError("IP literals must never reach the resolver");
        });
        assertEquals(plain, verdict(guard.check(a, PLAIN)));
        assertEquals(withAllowed, verdict(guard.check(a, ALLOW_PRIVATE)));
    }

    private static String verdict(SsrfGuard.Verdict v) {
        if (v instanceof SsrfGuard.Verdict.Refused r) {
            String d = r.detail().replace("the destination resolves to ", "");
            return d.indexOf(';') < 0 ? d : d.substring(0, d.indexOf(';'));
        }
        return "ok";
    }

    @Test
    void everyResolvedAddressIsChecked() throws Exception {
        InetAddress pub = InetAddress.getByName("93.184.215.14");
        InetAddress lan = InetAddress.getByName("10.0.0.5");
        SsrfGuard guard = new SsrfGuard(NetworkSettings.defaults(), name -> new InetAddress[] {pub, lan});
        assertEquals("a private address", verdict(guard.check(Authority.parse("rebind.example.test", 80), PLAIN)));
        SsrfGuard.Verdict ok = guard.check(Authority.parse("rebind.example.test", 80), ALLOW_PRIVATE);
        assertEquals(List.of(pub, lan), assertInstanceOf(SsrfGuard.Verdict.Admitted.class, ok).addresses());
    }

    @Test
    void resolvedMappedAddressesAreCheckedAsIpv4() throws Exception {
        InetAddress mapped = java.net.Inet6Address.getByAddress("x", new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                (byte) 0xff, (byte) 0xff, 127, 0, 0, 1}, -1);
        SsrfGuard guard = new SsrfGuard(NetworkSettings.defaults(), name -> new InetAddress[] {mapped});
        assertEquals("a loopback address", verdict(guard.check(Authority.parse("m.example.test", 80), PLAIN)));
    }

    @Test
    void loopbackIsAdmittedOnlyWithTheDevelopmentSetting() throws Exception {
        SsrfGuard dev = new SsrfGuard(new NetworkSettings(true, Map.of()), name -> new InetAddress[0]);
        assertEquals("ok", verdict(dev.check(Authority.parse("127.0.0.1", 80), PLAIN)));
        assertEquals("ok", verdict(dev.check(Authority.parse("[::1]", 80), PLAIN)));
        assertEquals("a link-local address", verdict(dev.check(Authority.parse("169.254.1.1", 80), PLAIN)));
    }

    @Test
    void staticHostsReplaceDnsButStillPassEveryCheck() throws Exception {
        SsrfGuard guard = new SsrfGuard(new NetworkSettings(false,
                Map.of("API.Example.Test.", InetAddress.getByName("127.0.0.1"))), name -> {
                    throw new AssertionError("static hosts must not be resolved");
                });
        assertEquals("a loopback address", verdict(guard.check(Authority.parse("api.example.test", 80), PLAIN)));
    }

    @Test
    void unresolvableNamesAreRefused() {
        SsrfGuard guard = new SsrfGuard(NetworkSettings.defaults(), name -> {
            throw new UnknownHostException(name);
        });
        SsrfGuard.Verdict v = guard.check(authority("nx.example.test"), PLAIN);
        assertEquals("unresolvable_host", assertInstanceOf(SsrfGuard.Verdict.Refused.class, v).error());
        SsrfGuard empty = new SsrfGuard(NetworkSettings.defaults(), name -> new InetAddress[0]);
        assertEquals("unresolvable_host",
                assertInstanceOf(SsrfGuard.Verdict.Refused.class, empty.check(authority("e.example.test"), PLAIN))
                        .error());
    }

    private static Authority authority(String host) {
        try {
            return Authority.parse(host, 80);
        } catch (FramingException e) {
            throw new AssertionError(e);
        }
    }
}
