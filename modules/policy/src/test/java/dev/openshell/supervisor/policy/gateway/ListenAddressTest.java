package dev.openshell.supervisor.policy.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class ListenAddressTest {
    @Test
    void listenAddresses() throws Exception {
        assertEquals(InetAddress.getByName("127.0.0.1"),
                ListenAddress.parse("127.0.0.1:0").address());
        assertEquals("invalid listen address '0.0.0.0:65536': the port must be a number from 0 to 65535",
                assertThrows(IllegalArgumentException.class,
                        () -> ListenAddress.parse("0.0.0.0:65536"))
                        .getMessage());
        assertEquals("invalid listen address 'proxy.internal:3128': the host must be an IP address or localhost",
                assertThrows(IllegalArgumentException.class,
                        () -> ListenAddress.parse("proxy.internal:3128"))
                        .getMessage());
        assertEquals("invalid listen address '::1:3128': write it as host:port, with an IPv6 host in brackets"
                        + " ([::1]:3128)",
                assertThrows(IllegalArgumentException.class,
                        () -> ListenAddress.parse("::1:3128")).getMessage());
        assertEquals("localhost:0", ListenAddress.parse("localhost:0")
                .toString());
    }
}
