package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.policy.Glob;

import java.util.regex.Pattern;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The two glob engines (decisions 1 and 2) against a straightforward regex oracle, and the cases the decisions name.
 */
class GlobPropertyTest {
    /** The oracle: each glob construct as the regex the policy reference states. */
    static Pattern oracle(String glob, boolean path) {
        if (path && glob.equals("**")) {
            return Pattern.compile("(?s).*");
        }
        String one = path ? "[^/]" : ".";
        java.util.List<String> re = new java.util.ArrayList<>();
        for (int i = 0; i < glob.length(); i++) {
            char c = glob.charAt(i);
            if (c == '*' && i + 1 < glob.length() && glob.charAt(i + 1) == '*' && path) {
                boolean start = i == 0 || glob.charAt(i - 1) == '/';
                boolean end = i + 2 == glob.length() || glob.charAt(i + 2) == '/';
                if (start && end) {
                    if (i == 0) {
                        re.add("(?:/?|.*/)");
                        i += 2; // eats the "/" after
                    } else if (i + 2 == glob.length()) {
                        re.remove(re.size() - 1); // the "/" before
                        re.add("/.*");
                        i += 1;
                    } else {
                        re.remove(re.size() - 1);
                        re.add("(?:/|/.*/)");
                        i += 2;
                    }
                    continue;
                }
                re.add(one + "*");
                i++;
                continue;
            }
            switch (c) {
                case '*' -> re.add(one + "*");
                case '?' -> re.add(one);
                default -> re.add(Pattern.quote(String.valueOf(c)));
            }
        }
        return Pattern.compile("(?s)" + String.join("", re));
    }

    @Provide
    Arbitrary<String> pathGlobs() {
        return Arbitraries.of("/", "a", "b", "*", "**", "?", ".", "-").list().ofMinSize(1).ofMaxSize(8)
                .map(parts -> "/" + String.join("", parts));
    }

    @Provide
    Arbitrary<String> paths() {
        return Arbitraries.of("/", "a", "b", ".", "-", "ab").list().ofMaxSize(10).map(p -> "/" + String.join("", p));
    }

    @Provide
    Arbitrary<String> valueGlobs() {
        return Arbitraries.of("a", "b", ".", "/", "*", "?", "**", "-").list().ofMinSize(1).ofMaxSize(6)
                .map(p -> String.join("", p));
    }

    @Provide
    Arbitrary<String> values() {
        return Arbitraries.of("a", "b", ".", "/", "-", "").list().ofMaxSize(8).map(p -> String.join("", p));
    }

    @Property(tries = 2000)
    void pathGlobAgreesWithTheOracle(@ForAll("pathGlobs") String glob, @ForAll("paths") String path) {
        assertEquals(oracle(glob, true).matcher(path).matches(), Glob.path(glob).matches(path), glob + " ~ " + path);
    }

    @Property(tries = 2000)
    void valueGlobAgreesWithTheOracle(@ForAll("valueGlobs") String glob, @ForAll("values") String value) {
        assertEquals(oracle(glob, false).matcher(value).matches(), Glob.value(glob).matches(value),
                glob + " ~ " + value);
    }

    @Property(tries = 300)
    void hostilePathsMatchInLinearPasses(@ForAll("paths") String tail) {
        String hostile = "/" + "a".repeat(4000) + tail;
        // many stars would take exponential time in a backtracking matcher; the automaton visits each state once
        assertFalse(Glob.path("/*a*a*a*a*a*a*a*a*a*a*b").matches(hostile + "c"));
    }

    @Test
    void decisionOnePathSegments() {
        assertTrue(Glob.path("/repos/**").matches("/repos/"));
        assertTrue(Glob.path("/repos/**").matches("/repos/a/b"));
        assertFalse(Glob.path("/repos/**").matches("/repos"));
        assertFalse(Glob.path("/repos/*/issues").matches("/repos/a/b/issues"));
        assertTrue(Glob.path("/**/git-upload-pack").matches("/git-upload-pack"));
        assertTrue(Glob.path("/**/git-upload-pack").matches("/a/b.git/git-upload-pack"));
        assertTrue(Glob.path("**").matches(""));
        assertFalse(Glob.path("/v1/*").matches("/v1/chat/messages"), "endpoint path too: * stays in a segment");
        assertTrue(Glob.path("/a/{b,c}/[0-9]").matches("/a/c/7"));
        assertFalse(Glob.path("/a/[!x]").matches("/a/x"));
        assertFalse(Glob.path("/a?b").matches("/a/b"));
        assertTrue(Glob.path("/a\\*").matches("/a*"));
        assertFalse(Glob.path("/a\\*").matches("/ab"));
        assertFalse(Glob.path("/Repos").matches("/repos"), "case-sensitive");
    }

    @Test
    void decisionTwoNoDotDelimiter() {
        assertTrue(Glob.value("*").matches("github.create_issue"));
        assertTrue(Glob.value("foo-*").matches("foo-1.2"));
        assertTrue(Glob.value("v1.*").matches("v1.2.3"));
        assertTrue(Glob.value("NVIDIA/*").matches("NVIDIA/a/b"));
        assertTrue(Glob.value("").matches(""));
        assertFalse(Glob.value("?").matches(""));
    }

    @Test
    void malformedPatternsAreRefused() {
        assertEquals("unclosed '[' at character 4",
                assertThrows(IllegalArgumentException.class, () -> Glob.path("/a/[b")).getMessage());
        assertEquals("unclosed '{' at character 1",
                assertThrows(IllegalArgumentException.class, () -> Glob.value("{a,b")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Glob.value("{a,{b}}"));
        assertEquals("unexpected '}' at character 3: no '{' is open (write \\} for the character)",
                assertThrows(IllegalArgumentException.class, () -> Glob.path("/a}")).getMessage());
        assertThrows(IllegalArgumentException.class, () -> Glob.value("a\\"));
        assertThrows(IllegalArgumentException.class, () -> Glob.value("[z-a]"));
        assertThrows(IllegalArgumentException.class, () -> Glob.value("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}{o,p}{q,r}"));
    }

}
