package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import dev.openshell.middleware.spi.internal.Syntax;
import java.util.Objects;
import org.apiguardian.api.API;

/**
 * A service-owned stable binding ID (RFC 0009, "Registration and delivery").
 *
 * <p>Grammar: one or more segments separated by {@code /}; no segment is empty (so {@code /foo}, {@code foo/} and
 * {@code foo//bar} are invalid). Each segment is one or more of {@code a-z A-Z 0-9 . _ -}, at most 128 characters in
 * all. IDs are compared exactly (case-sensitively). The namespace {@code openshell/} is reserved for built-ins that ship
 * with the supervisor; the plugin host and the registry refuse any other claim to it.
 *
 * @param value the ID as written, for example {@code openshell/regex} or {@code acme/security/pii-redactor}
 */
@API(status = STABLE, since = "0.1")
public record BindingId(String value) implements Comparable<BindingId> {
    /** Longest binding ID, in characters. */
    public static final int MAX_LENGTH = 128;
    /** The reserved namespace prefix, including its separator. */
    public static final String RESERVED_PREFIX = "openshell/";

    /**
     * Checks the grammar.
     *
     * @throws IllegalArgumentException with a message that quotes the ID and says which rule it breaks
     * @throws NullPointerException if {@code value} is {@code null}
     */
    @API(status = STABLE, since = "0.1")
    public BindingId {
        Objects.requireNonNull(value, "binding ID");
        String problem = problem(value);
        if (problem != null) {
            throw new IllegalArgumentException("invalid binding ID '%s': %s".formatted(Syntax.printable(value), problem));
        }
    }

    /**
     * {@return {@code null} when {@code value} is a valid binding ID, else a short description of the rule it breaks}
     *
     * @param value a candidate ID; never {@code null}
     */
    @API(status = STABLE, since = "0.1")
    public static String problem(String value) {
        if (value.isEmpty()) {
            return "it is empty";
        }
        if (value.length() > MAX_LENGTH) {
            return "it is longer than " + MAX_LENGTH + " characters";
        }
        if (value.startsWith("/") || value.endsWith("/") || value.contains("//")) {
            return "path segments must not be empty";
        }
        for (int i = 0; i < value.length(); i++) {
            if (!Syntax.isNameChar(value.charAt(i))) {
                return "segments may only contain letters, digits, '.', '_' and '-'";
            }
        }
        return null;
    }

    /** {@return whether {@code value} is a valid binding ID} @param value a candidate ID; never {@code null} */
    @API(status = STABLE, since = "0.1")
    public static boolean isValid(String value) {
        return problem(value) == null;
    }

    /** {@return whether this ID is in the reserved {@code openshell/} namespace} */
    public boolean isReserved() {
        return value.startsWith(RESERVED_PREFIX);
    }

    @Override
    public int compareTo(BindingId other) {
        return value.compareTo(other.value);
    }

    @Override
    public String toString() {
        return value;
    }

}
