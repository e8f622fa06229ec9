package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AuthorityTest {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "Example.COM|80|example.com:80",
            "example.com.:8080|80|example.com:8080",
            "example.com:|80|example.com:80",
            "a_b.example|443|a_b.example:443",
            "[2001:DB8:0:0:0:0:0:1]:443|80|[2001:db8::1]:443",
            "[::FFFF:192.0.2.1]|80|192.0.2.1:80",
            "3232235777|80|192.168.1.1:80",
            "0xC0.0xA8.0x1.0x1|80|192.168.1.1:80",
            "192.168.257|80|192.168.1.1:80",
            "0x|80|0.0.0.0:80",
            "1.2.3.4:00080|80|1.2.3.4:80"})
    void normalises(String text, int defaultPort, String expected) throws Exception {
        assertEquals(expected, Authority.parse(text, defaultPort).hostPort());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ":80", "user@example.com", "exa mple.com", "example..com", "-x.example.com:0",
            "example.com:65536", "example.com:8a", "example.com:+80", "[::1", "[::1]x", "[fe80::1%eth0]", "[v1.x]",
            "[1.2.3.4]", "256.1.1.1", "1.2.3.4.5", "08.1.1.1", "1.2.3.0x100", "4294967296", "ex\u00e4mple.com",
            "example.com:99999"})
    void rejects(String text) {
        FramingException e = assertThrows(FramingException.class, () -> Authority.parse(text, 80));
        assertEquals(400, e.status());
        assertEquals("invalid_authority", e.code());
    }

    @Test
    void connectNeedsAPort() {
        assertThrows(FramingException.class, () -> Authority.parse("example.com", -1));
    }

    @Test
    void formatsIpv6InRfc5952Form() throws Exception {
        assertEquals("2001:db8::1:0:0:1", Authority.parse("[2001:db8:0:0:1:0:0:1]", 80).host());
        assertEquals("2001:0:0:1::1", Authority.parse("[2001:0:0:1:0:0:0:1]", 80).host());
        assertEquals("2001:db8:0:1:1:1:1:1", Authority.parse("[2001:db8::1:1:1:1:1]", 80).host());
        assertEquals("::", Authority.parse("[::]", 80).host());
    }
}
