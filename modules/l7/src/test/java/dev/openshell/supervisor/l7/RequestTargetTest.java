package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.l7.RequestTarget.InvalidTargetException;

import java.util.List;
import java.util.Map;
import java.util.Optional;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Request-target canonicalization (OpenShell {@code l7/path.rs}, spec section 1.5). */
class RequestTargetTest {
    static String canonical(String raw) throws InvalidTargetException {
        return RequestTarget.canonicalize(raw, false).target();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "/public/%2e%2e/secret|/secret",
        "//public//../secret|/secret",
        "/public/..;/secret|/secret",
        "/a;jsessionid=x/b|/a/b",
        "/users/%40alice|/users/@alice",
        "/files/hello%20world.txt|/files/hello%20world.txt",
        "/a/caf%c3%a9|/a/caf%C3%A9",
        "/a/%252F/b|/a/%252F/b",
        "/a/./b/|/a/b/",
        "/a/b/..|/a/",
        "/a/.|/a/",
        "''|/",
        "/repos|/repos",
        "/repos/|/repos/",
        "/x?b=1&a=%zz|/x?b=1&a=%zz",
        "http://api.t/public/a/../b|/public/b",
        "http://api.t|/",
        "https://api.t:8443?x=1|/?x=1",
        "/%7Euser/%41|/~user/A",
        "/a:b/c@d/!$&'()*+,=|/a:b/c@d/!$&'()*+,="
    })
    void canonicalForms(String raw, String expected) throws InvalidTargetException {
        assertEquals(expected, canonical(raw));
    }

    @Test
    void absoluteFormKeepsItsAuthorityForTheHostCheck() throws InvalidTargetException {
        RequestTarget t = RequestTarget.canonicalize("http://api.t:80/a", false);
        assertEquals(Optional.of("api.t:80"), t.authority());
        assertEquals("/a", t.path());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/..", "/a/../..", "/a\tb", "/a\u0000", "/caf\u00e9", "/a#frag", "*", "a/b", "/a%2Fb",
        "/a%2fb", "/a%", "/a%4", "/a%zz", "/a%00", "/a%0A", "/a%7F", "/%2e%2e", "/a/%2E%2E/%2e%2e/.."})
    void refused(String raw) {
        assertThrows(InvalidTargetException.class, () -> canonical(raw));
    }

    @Test
    void tooLongPathsAreRefused() throws InvalidTargetException {
        canonical("/" + "a".repeat(RequestTarget.MAX_PATH_CHARS - 1));
        assertThrows(InvalidTargetException.class, () -> canonical("/" + "a".repeat(RequestTarget.MAX_PATH_CHARS)));
    }

    @Test
    void encodedSlashIsKeptEncodedWhenAllowed() throws InvalidTargetException {
        RequestTarget t = RequestTarget.canonicalize("/repos/group%2fproject/../x", true);
        assertEquals("/repos/x", t.path());
        RequestTarget kept = RequestTarget.canonicalize("/repos/group%2Fproject", true);
        assertEquals("/repos/group%2Fproject", kept.path());
        assertTrue(kept.encodedSlash());
        assertEquals("/a/..%2Fb", RequestTarget.canonicalize("/a/..%2Fb", true).path(), "not a dot segment");
    }

    @Test
    void queryParsing() throws InvalidTargetException {
        assertEquals(Map.of("tag", List.of("foo a", "b"), "flag", List.of(""), "k", List.of("=v")),
                RequestTarget.parseQuery("tag=foo+a&&tag=b&flag&k==v"));
        assertEquals(Map.of("tag", List.of("foo-a")), RequestTarget.parseQuery("tag=foo%2Da"));
        assertEquals(Map.of("é", List.of("ü")), RequestTarget.parseQuery("%C3%A9=%C3%BC"));
        assertThrows(InvalidTargetException.class, () -> RequestTarget.parseQuery("a=%ff"));
        assertThrows(InvalidTargetException.class, () -> RequestTarget.parseQuery("a=%g1"));
    }

    @Provide
    Arbitrary<String> targets() {
        return Arbitraries.of("/", "a", "b", ".", "..", ";", "x=1", "%2e", "%2E", "%2F", "%2f", "%25", "%41", "%c3%a9",
                "//", "?", "&", "%", "~", "@", ":", " ", "%20").list().ofMaxSize(12)
                .map(p -> "/" + String.join("", p));
    }

    @Property(tries = 3000)
    void canonicalizationIsIdempotentAndClean(@ForAll("targets") String raw, @ForAll boolean allowSlash) {
        RequestTarget t;
        try {
            t = RequestTarget.canonicalize(raw, allowSlash);
        } catch (InvalidTargetException e) {
            return;
        }
        RequestTarget again;
        try {
            again = RequestTarget.canonicalize(t.target(), allowSlash);
        } catch (InvalidTargetException e) {
            throw new AssertionError("the canonical form " + t.target() + " of " + raw + " is refused", e);
        }
        assertEquals(t, again, raw);
        String path = t.path();
        assertTrue(path.startsWith("/"));
        assertFalse(path.contains("//"), path);
        for (String segment : path.split("/", -1)) {
            assertFalse(segment.equals(".") || segment.equals(".."), path);
        }
        // a "/" in the canonical path is always a separator the client wrote, never a decoded %2F
        long written = raw.chars().filter(ch -> ch == '/').count();
        String rawPath = raw.contains("?") ? raw.substring(0, raw.indexOf('?')) : raw;
        assertTrue(path.chars().filter(ch -> ch == '/').count() <= Math.max(1,
                rawPath.chars().filter(ch -> ch == '/').count()), () -> raw + " -> " + path + " (" + written + ")");
        if (!allowSlash) {
            assertFalse(path.toUpperCase().contains("%2F"), path);
        }
    }
}
