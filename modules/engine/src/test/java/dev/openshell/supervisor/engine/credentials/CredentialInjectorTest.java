package dev.openshell.supervisor.engine.credentials;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.host.Secret;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CredentialInjectorTest {
    private static final String OPENAI = "sk-real-0123456789abcdef";
    private static final CredentialInjector INJECTOR = new CredentialInjector(List.of(
            new Credential("OPENAI_API_KEY", Secret.of(OPENAI), "api.openai.com"::equals, "[api.openai.com]"),
            new Credential("GH_TOKEN", Secret.of("ghp_real&token=1"), h -> h.endsWith(".github.com"),
                    "[*.github.com]", new Credential.Placement(Set.of(), Set.of("token", "b"), false, true, false,
                            Set.of())),
            new Credential("PINNED", Secret.of("pinned-value"), h -> true, "[**]",
                    new Credential.Placement(Set.of("x-api-key", "cookie"), Set.of(), true, false, true,
                            Set.of(8443))),
            new Credential("BAD", Secret.of("x"), h -> true, "[**]")));

    private static CredentialInjector.Result.Injected injected(CredentialInjector.Result r) {
        return assertInstanceOf(CredentialInjector.Result.Injected.class, r, r.toString());
    }

    @Test
    void bearerTokenInAuthorization() {
        var r = injected(INJECTOR.inject("api.openai.com", List.of(
                new HttpHeader("authorization", "Bearer openshell:resolve:env:OPENAI_API_KEY"),
                new HttpHeader("accept", "application/json")), ""));
        assertEquals(List.of(new HttpHeader("authorization", "Bearer " + OPENAI),
                new HttpHeader("accept", "application/json")), r.headers());
        assertEquals(Set.of("OPENAI_API_KEY"), r.used());
    }

    @Test
    void insideBasicCredentials() {
        String basic = Base64.getEncoder().encodeToString("git:openshell:resolve:env:GH_TOKEN"
                .getBytes(StandardCharsets.UTF_8));
        var r = injected(INJECTOR.inject("api.github.com", List.of(new HttpHeader("authorization",
                "Basic " + basic)), ""));
        String decoded = new String(Base64.getDecoder().decode(r.headers().get(0).value().substring(6)),
                StandardCharsets.UTF_8);
        assertEquals("git:ghp_real&token=1", decoded);
    }

    @Test
    void inTheQueryLiteralOrPercentEncodedAndTheValueIsEncoded() {
        var r = injected(INJECTOR.inject("api.github.com", List.of(),
                "a=1&token=openshell:resolve:env:GH_TOKEN&b=openshell%3Aresolve%3Aenv%3AGH_TOKEN"));
        assertEquals("a=1&token=ghp_real%26token%3D1&b=ghp_real%26token%3D1", r.query());
    }

    @Test
    void nothingToDoLeavesTheRequestAlone() {
        List<HttpHeader> h = List.of(new HttpHeader("x", "y"));
        var r = injected(INJECTOR.inject("example.com", h, "q=1"));
        assertEquals(h, r.headers());
        assertEquals("q=1", r.query());
        assertEquals(Set.of(), r.used());
    }

    @Test
    void aCredentialNotBoundToTheHostIsRefusedAndOnlyTheOperatorDetailNamesIt() {
        var r = INJECTOR.inject("evil.example.com", List.of(new HttpHeader("authorization",
                "Bearer openshell:resolve:env:OPENAI_API_KEY")), "");
        assertEquals(new CredentialInjector.Result.Refused(CredentialInjector.HOST_MISMATCH,
                "a credential placeholder cannot be resolved for this destination",
                "credential 'OPENAI_API_KEY' (bound to [api.openai.com]) may not be sent to evil.example.com"), r);
    }

    private static String refusal(String scheme, int port, List<HttpHeader> headers, Set<String> nominated,
                                  String query) {
        var r = INJECTOR.inject(new CredentialInjector.Destination(scheme, "api.github.com", port), headers,
                nominated, query);
        var refused = assertInstanceOf(CredentialInjector.Result.Refused.class, r, r.toString());
        assertFalse(refused.message().contains("GH_TOKEN") || refused.message().contains("PINNED")
                || refused.message().contains("github"), refused.message());
        return refused.code();
    }

    @Test
    void placementsAreEnforced() {
        String gh = "openshell:resolve:env:GH_TOKEN";
        String pinned = "openshell:resolve:env:PINNED";
        // default placements: ordinary headers yes; Cookie, Proxy-*, hop-by-hop, nominated, other query names no
        assertEquals(CredentialInjector.MISPLACED, refusal("https", 443, List.of(new HttpHeader("cookie", "s=" + gh)),
                Set.of(), ""));
        assertEquals(CredentialInjector.MISPLACED, refusal("https", 443,
                List.of(new HttpHeader("proxy-authorization", "Bearer " + gh)), Set.of(), ""));
        assertEquals(CredentialInjector.MISPLACED, refusal("https", 443, List.of(new HttpHeader("te", gh)),
                Set.of(), ""));
        assertEquals(CredentialInjector.MISPLACED, refusal("https", 443, List.of(new HttpHeader("x-hop", gh)),
                Set.of("x-hop"), ""));
        assertEquals(CredentialInjector.MISPLACED, refusal("https", 443, List.of(), Set.of(), "other=" + gh));
        assertEquals(CredentialInjector.MISPLACED, refusal("https", 443, List.of(), Set.of(),
                "openshell%3Aresolve%3Aenv%3AGH_TOKEN=1"));
        assertEquals(CredentialInjector.PLAINTEXT, refusal("http", 80, List.of(new HttpHeader("x-k", gh)),
                Set.of(), ""));
        // listed headers only; Basic user allowed, password not; plaintext allowed; port 8443 only
        assertEquals(CredentialInjector.MISPLACED, refusal("http", 8443,
                List.of(new HttpHeader("authorization", "Bearer " + pinned)), Set.of(), ""));
        assertEquals(CredentialInjector.PORT, refusal("https", 443, List.of(new HttpHeader("x-api-key", pinned)),
                Set.of(), ""));
        String basicPassword = Base64.getEncoder().encodeToString(("u:" + pinned).getBytes(StandardCharsets.UTF_8));
        assertEquals(CredentialInjector.MISPLACED, refusal("http", 8443,
                List.of(new HttpHeader("authorization", "Basic " + basicPassword)), Set.of(), ""));
        var ok = injected(INJECTOR.inject(new CredentialInjector.Destination("http", "api.github.com", 8443),
                List.of(new HttpHeader("x-api-key", pinned), new HttpHeader("cookie", "s=" + pinned),
                        new HttpHeader("authorization", "Basic " + Base64.getEncoder().encodeToString(
                                (pinned + ":pw").getBytes(StandardCharsets.UTF_8)))), Set.of(), ""));
        assertEquals("pinned-value", ok.headers().get(0).value());
        assertEquals("s=pinned-value", ok.headers().get(1).value());
        assertEquals("pinned-value:pw", new String(Base64.getDecoder().decode(ok.headers().get(2).value()
                .substring(6)), StandardCharsets.UTF_8));
    }

    @Test
    void unknownAndMalformedPlaceholdersAreRefused() {
        assertEquals(CredentialInjector.UNKNOWN, ((CredentialInjector.Result.Refused) INJECTOR.inject("h",
                List.of(new HttpHeader("x-key", "openshell:resolve:env:NOPE")), "")).code());
        assertEquals(CredentialInjector.INVALID, ((CredentialInjector.Result.Refused) INJECTOR.inject("h",
                List.of(new HttpHeader("x-key", "openshell:resolve:file:/etc/passwd")), "")).code());
        assertEquals(CredentialInjector.INVALID, ((CredentialInjector.Result.Refused) INJECTOR.inject("h",
                List.of(), "k=openshell%3aresolve%3Afile%3Ax")).code());
    }

    @Test
    void refusalsNeverCarryTheValue() {
        var r = INJECTOR.inject("evil.example.com", List.of(new HttpHeader("a",
                "openshell:resolve:env:OPENAI_API_KEY")), "");
        assertFalse(r.toString().contains(OPENAI));
        var ok = INJECTOR.inject("api.openai.com", List.of(new HttpHeader("a",
                "openshell:resolve:env:OPENAI_API_KEY")), "");
        assertFalse(ok.toString().contains(OPENAI), ok.toString());
    }

    @Property
    void textWithoutTheMarkerIsNeverChanged(@ForAll String value, @ForAll String query) {
        if (value.contains("openshell") || query.contains("openshell")) {
            return;
        }
        var r = injected(INJECTOR.inject("api.openai.com", List.of(new HttpHeader("x", value)), query));
        assertEquals(value, r.headers().get(0).value());
        assertEquals(query, r.query());
    }

    @TempDir
    Path tmp;

    @Test
    void sourcesFromEnvironmentAndFile() throws Exception {
        CredentialSources sources = new CredentialSources(Map.of("KEY", "from-env"));
        assertEquals("from-env", sources.resolve("K", "env:KEY").reveal());
        Path f = Files.writeString(tmp.resolve("secret"), "from-file\n");
        assertEquals("from-file", sources.resolve("K", "file:" + f).reveal());
        assertEquals("credential 'K': environment variable MISSING is not set",
                assertThrows(IllegalArgumentException.class, () -> sources.resolve("K", "env:MISSING")).getMessage());
        Files.writeString(f, "a\nb");
        assertEquals("credential 'K': the value contains CR, LF or NUL",
                assertThrows(IllegalArgumentException.class, () -> sources.resolve("K", "file:" + f)).getMessage());
        assertEquals("credential 'K': source must be env:NAME or file:/path (got a value starting with 'vault')",
                assertThrows(IllegalArgumentException.class, () -> sources.resolve("K", "vault:x")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> sources.resolve("K", "file:relative"))
                .getMessage().contains("absolute path"));
    }

    @Test
    void theCredentialsBoundToAHostAreNamedWhateverTheRequestCarries() {
        assertEquals(Set.of("OPENAI_API_KEY", "PINNED", "BAD"),
                INJECTOR.boundTo("API.openai.com"));
        assertEquals(Set.of("GH_TOKEN", "PINNED", "BAD"),
                INJECTOR.boundTo("api.github.com"));
        assertEquals(Set.of("PINNED", "BAD"), INJECTOR.boundTo("example.org"));
    }
}
