package dev.openshell.middleware.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

class BindingIdPropertyTest {
    @Provide
    Arbitrary<List<String>> segments() {
        Arbitrary<String> segment = Arbitraries.strings().withChars("abcXYZ019._-/ ?").ofMinLength(0).ofMaxLength(6);
        return segment.list().ofMinSize(1).ofMaxSize(4);
    }

    /** Valid exactly when every segment is non-empty and made of allowed characters, and the whole is short. */
    @Property
    void validityMatchesTheGrammar(@ForAll("segments") List<String> parts) {
        String id = String.join("/", parts);
        boolean expected = !id.isEmpty() && id.length() <= BindingId.MAX_LENGTH
                && List.of(id.split("/", -1)).stream().allMatch(s -> !s.isEmpty() && s.matches("[A-Za-z0-9._-]+"));
        assertEquals(expected, BindingId.isValid(id), id);
    }
}
