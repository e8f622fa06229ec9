package dev.openshell.middleware.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class BindingIdTest {
    @ParameterizedTest
    @ValueSource(strings = {"anonymizer", "nvidia/anonymizer", "acme/security/pii-redactor", "openshell/regex",
            "a", "v1.2_x-y"})
    void acceptsTheRfcGrammar(String id) {
        assertEquals(id, new BindingId(id).value());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/foo", "foo/", "foo//bar", "/", "//"})
    void rejectsEmptySegments(String id) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new BindingId(id));
        assertEquals("invalid binding ID '" + id + "': path segments must not be empty", e.getMessage());
    }

    @Test
    void rejectsEmptyAndOtherCharacters() {
        assertEquals("invalid binding ID '': it is empty",
                assertThrows(IllegalArgumentException.class, () -> new BindingId("")).getMessage());
        assertEquals("invalid binding ID 'a b': segments may only contain letters, digits, '.', '_' and '-'",
                assertThrows(IllegalArgumentException.class, () -> new BindingId("a b")).getMessage());
        assertEquals("invalid binding ID 'x\\u000Ay': segments may only contain letters, digits, '.', '_' and '-'",
                assertThrows(IllegalArgumentException.class, () -> new BindingId("x\ny")).getMessage());
        assertFalse(BindingId.isValid("x".repeat(BindingId.MAX_LENGTH + 1)));
        assertTrue(BindingId.isValid("x".repeat(BindingId.MAX_LENGTH)));
    }

    @Test
    void reservedNamespaceIsTheOpenshellPrefixOnly() {
        assertTrue(new BindingId("openshell/regex").isReserved());
        assertFalse(new BindingId("openshell").isReserved());
        assertFalse(new BindingId("openshellx/regex").isReserved());
        assertFalse(new BindingId("OpenShell/regex").isReserved(), "IDs are compared exactly");
    }
}
