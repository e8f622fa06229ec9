package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** {@link Glob#path(String)} (binary paths and L7 paths): the segment rules hold for any segment text, not only the examples. */
class GlobPathPropertyTest {
    @Provide
    Arbitrary<String> segment() {
        // any characters a path segment may hold, glob metacharacters included (they are values here)
        return Arbitraries.strings().withCharRange(' ', '~').excludeChars('/').ofMinLength(0).ofMaxLength(12);
    }

    @Provide
    Arbitrary<String> text() {
        return Arbitraries.strings().withCharRange(' ', '~').ofMinLength(0).ofMaxLength(24);
    }

    @Property
    void starMatchesExactlyTheValuesWithoutASlash(@ForAll("text") String middle) {
        assertEquals(middle.indexOf('/') < 0, Glob.path("/opt/*/bin").matches("/opt/" + middle + "/bin"));
    }

    @Property
    void doubleStarSpansAnyDepth(@ForAll("segment") String a, @ForAll("segment") String b) {
        assertTrue(Glob.path("/opt/**/node").matches("/opt/" + a + "/" + b + "/node"));
        assertTrue(Glob.path("**/node").matches("/" + a + "/" + b + "/node"));
    }

    @Property
    void anEscapedPatternMatchesOnlyItself(@ForAll("text") String literal, @ForAll("text") String other) {
        StringBuilder escaped = new StringBuilder();
        for (char c : literal.toCharArray()) {
            escaped.append("*?[]{}\\,".indexOf(c) >= 0 ? "\\" + c : String.valueOf(c));
        }
        Glob g = Glob.path(escaped.toString());
        assertTrue(g.matches(literal));
        assertEquals(literal.equals(other), g.matches(other));
    }

    @Property
    void questionMarkIsOneCharacterOfASegment(@ForAll("text") String middle) {
        assertEquals(middle.length() == 1 && !middle.equals("/"),
                Glob.path("/bin/py?*x").matches("/bin/py" + middle + "x") && middle.length() == 1);
    }
}
