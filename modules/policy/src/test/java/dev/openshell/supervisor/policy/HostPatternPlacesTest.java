package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.policy.gateway.GatewayConfigLoader;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A host pattern written as a URL or an authority ({@code api.example.com:443}, {@code https://api.example.com},
 * {@code user@host}, {@code host/path}) is a located error in every place a host pattern is read: endpoint hosts,
 * middleware {@code endpoints.include}/{@code exclude}, credential {@code hosts} and gateway {@code static_hosts}.
 * A middleware include pattern that selects no host any endpoint admits is a located warning (the stage never runs).
 */
class HostPatternPlacesTest {
    private static final String PORT = "it has a port (':26080'): host patterns match the host name without its"
            + " port, so this one would match no host; give the port in the endpoint's port or ports (a ':' appears"
            + " in a host pattern only in an IPv6 address, written without brackets)";

    private static final String POLICY = """
            version: 1
            network_policies:
              api:
                endpoints:
                  - { host: %s, port: 26080 }
            network_middlewares:
              secrets:
                middleware: openshell/regex
                on_error: fail_open
                endpoints:
                  include: [%s]
                  exclude: [%s]
            """;

    private static List<String> errors(String yaml) {
        PolicyException e = assertThrows(PolicyException.class, () -> SandboxPolicyLoader.parse("p.yaml", yaml));
        return e.errors().collect(ConfigProblem::describe).castToList();
    }

    private static List<String> warnings(String yaml) {
        return SandboxPolicyLoader.parse("p.yaml", yaml).warnings().collect(ConfigProblem::describe).castToList();
    }

    @Test
    void aPortInAMiddlewareSelectorIsALocatedError() {
        assertEquals(List.of("p.yaml:11:17: error: network_middlewares.secrets.endpoints.include[0]: invalid host"
                        + " pattern 'api.t:26080': " + PORT),
                errors(POLICY.formatted("api.t", "\"api.t:26080\"", "b.t")));
        assertEquals(List.of("p.yaml:12:17: error: network_middlewares.secrets.endpoints.exclude[0]: invalid host"
                        + " pattern 'api.t:*': it has a port (':*'): host patterns match the host name without its"
                        + " port, so this one would match no host; give the port in the endpoint's port or ports (a"
                        + " ':' appears in a host pattern only in an IPv6 address, written without brackets)"),
                errors(POLICY.formatted("api.t", "api.t", "\"api.t:*\"")));
    }

    @Test
    void aPortOrSchemeInAnEndpointHostIsALocatedError() {
        assertEquals(List.of("p.yaml:5:17: error: network_policies.api.endpoints[0].host: invalid host pattern"
                        + " 'api.t:26080': " + PORT),
                errors(POLICY.formatted("\"api.t:26080\"", "api.t", "b.t")));
        assertEquals(List.of("p.yaml:5:17: error: network_policies.api.endpoints[0].host: invalid host pattern"
                        + " 'https://api.t': it has a scheme ('https://'): write the host name only"),
                errors(POLICY.formatted("\"https://api.t\"", "api.t", "b.t")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"nomatch.example", "127.0.0.1", "*.other.t"})
    void anIncludeThatSelectsNoAdmittedHostWarns(String include) {
        assertEquals(List.of("p.yaml:11:17: warning: network_middlewares.secrets.endpoints.include[0]: include"
                        + " pattern '" + include + "' selects no host that an endpoint of network_policies admits,"
                        + " so this middleware never runs for it; name a host of an endpoint"),
                warnings(POLICY.formatted("api.t", "\"" + include + "\"", "b.t")));
    }

    @ParameterizedTest
    @ValueSource(strings = {"api.t", "API.T", "*.t", "**", "a?i.t"})
    void anIncludeThatSelectsAnAdmittedHostDoesNotWarn(String include) {
        assertTrue(warnings(POLICY.formatted("api.t", "\"" + include + "\"", "b.t")).isEmpty());
    }

    @Test
    void aHostlessEndpointAdmitsEveryName() {
        String yaml = POLICY.replace("{ host: %s, port: 26080 }", "{ port: 26080, allowed_ips: [\"10.0.0.0/8\"] }")
                .formatted("nomatch.example", "b.t");
        assertTrue(warnings(yaml).isEmpty(), () -> warnings(yaml).toString());
    }

    @Test
    void credentialHostsAndStaticHostsRefuseAuthorities() {
        PolicyException e = assertThrows(PolicyException.class, () -> GatewayConfigLoader.parse("g.toml", """
                [[openshell.supervisor.credentials]]
                name = "key"
                source = "env:KEY"
                hosts = ["api.t:26080", "user@api.t"]
                [openshell.supervisor.network.static_hosts]
                "api.t:26080" = "127.0.0.1"
                """, Path.of("/etc/supervisor")));
        assertEquals(List.of(
                "g.toml:4:10: error: openshell.supervisor.credentials[0].hosts[0]: invalid host pattern"
                        + " 'api.t:26080': " + PORT,
                "g.toml:4:25: error: openshell.supervisor.credentials[0].hosts[1]: invalid host pattern"
                        + " 'user@api.t': it has userinfo (text before '@'): write the host name only",
                "g.toml:6:1: error: openshell.supervisor.network.static_hosts.\"api.t:26080\": static host name"
                        + " 'api.t:26080' is not a valid host name: " + PORT),
                e.errors().collect(ConfigProblem::describe).castToList());
    }
}
