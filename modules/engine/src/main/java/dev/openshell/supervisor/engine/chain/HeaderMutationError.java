package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.Syntax;
import java.util.Objects;

/**
 * Why {@link HeaderRules} refused a stage's header mutations (RFC 0009, "The middleware contract": "OpenShell
 * validates and applies a stage's mutations atomically"). The message texts and platform codes are stable: they match
 * the reference implementation's error strings ({@code tests/data/conformance/header_rules.txt}, section 3).
 *
 * <p>{@link #message()} quotes the header name as the stage wrote it (original case), with control and format
 * characters escaped as {@code \\uXXXX} and at most {@value #MAX_QUOTED_NAME} characters (the one rule,
 * {@code Syntax.printable}), so the text is safe to log. It never contains a
 * header value. Operator-run stages' messages are still replaced by the {@link #code()} in client responses and
 * security logs.
 *
 * @param kind the rule broken
 * @param name the offending header name as written by the stage; empty for {@link Kind#TOO_MANY},
 *     {@link Kind#TOO_LARGE}, {@link Kind#INVALID_EXISTING_ACTION}, {@link Kind#UNSUPPORTED_EXISTING_ACTION} and
 *     {@link Kind#EMPTY}
 * @param count the number of mutations, for {@link Kind#TOO_MANY}; 0 otherwise
 */
public record HeaderMutationError(Kind kind, String name, int count) {
    /** Longest header name quoted in a message, in characters. */
    public static final int MAX_QUOTED_NAME = 128;

    /** The rules, with their message templates and platform codes. */
    public enum Kind {
        /** More than {@code 64} mutations in one result. */
        TOO_MANY("header_mutation_count_over_capacity"),
        /** A name that is empty or not an RFC 9110 token. */
        INVALID_NAME("header_mutation_invalid_name"),
        /** A credential-bearing, routing, framing or static hop-by-hop header. */
        PROTECTED("header_mutation_protected_header"),
        /** A header nominated by the request's {@code Connection} header. */
        HOP_BY_HOP("header_mutation_hop_by_hop_header"),
        /** A write outside {@code x-openshell-middleware-*}. */
        WRITE_NAMESPACE("header_mutation_write_namespace"),
        /** A value with CR, LF, NUL, another control character, DEL, or an unpaired UTF-16 surrogate. */
        UNSAFE_VALUE("header_mutation_unsafe_value"),
        /** More than 32768 bytes of lowercased names plus values (writes) and names (removes). */
        TOO_LARGE("header_mutation_bytes_over_capacity"),
        /** An {@code on_existing} value this supervisor does not know (the wire's unknown enum number). */
        INVALID_EXISTING_ACTION("header_mutation_invalid_existing_action"),
        /** A write without {@code on_existing} (the wire's {@code UNSPECIFIED}). */
        MISSING_EXISTING_ACTION("header_mutation_missing_existing_action"),
        /**
         * A known {@code on_existing} value this supervisor does not implement. No value of
         * {@link dev.openshell.middleware.spi.ExistingHeaderAction} produces it today; it is kept so the code table
         * matches the reference implementation and a transport adapter can report it.
         */
        UNSUPPORTED_EXISTING_ACTION("header_mutation_unsupported_existing_action"),
        /**
         * A wire {@code HeaderMutation} with neither {@code write} nor {@code remove} set. The SPI's sealed
         * {@link dev.openshell.middleware.spi.HeaderMutation} cannot express it; a transport adapter that receives one
         * reports it with this kind.
         */
        EMPTY("header_mutation_empty");

        private final String code;

        Kind(String code) {
            this.code = code;
        }

        /** {@return the stable platform code, for example {@code header_mutation_protected_header}} */
        public String code() {
            return code;
        }
    }

    /** @throws NullPointerException if {@code kind} or {@code name} is {@code null} */
    public HeaderMutationError {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(name, "name");
    }

    /** {@return the stable platform code} */
    public String code() {
        return kind.code();
    }

    /** {@return the display text, exactly as the reference implementation words it (see the class comment)} */
    public String message() {
        String n = quotable(name);
        return switch (kind) {
            case TOO_MANY -> "middleware returned too many header mutations: %d exceeds %d"
                    .formatted(count, dev.openshell.middleware.spi.EnvelopeLimits.MAX_HEADER_MUTATIONS);
            case INVALID_NAME -> "middleware returned invalid header name '" + n + "'";
            case PROTECTED -> "middleware cannot mutate protected header '" + n + "'";
            case HOP_BY_HOP -> "middleware cannot mutate hop-by-hop header '" + n + "'";
            case WRITE_NAMESPACE -> "middleware can only write request headers prefixed with "
                    + HeaderRules.MIDDLEWARE_PREFIX + " and cannot write '" + n + "'";
            case UNSAFE_VALUE -> "middleware cannot write header '" + n + "' with an unsafe value";
            case TOO_LARGE -> "middleware header mutations exceed "
                    + dev.openshell.middleware.spi.EnvelopeLimits.MAX_HEADER_MUTATION_BYTES + " bytes";
            case INVALID_EXISTING_ACTION -> "middleware returned invalid on_existing action";
            case MISSING_EXISTING_ACTION -> "middleware must specify on_existing for header '" + n + "'";
            case UNSUPPORTED_EXISTING_ACTION -> "middleware returned unsupported on_existing action";
            case EMPTY -> "middleware returned an empty header mutation";
        };
    }

    @Override
    public String toString() {
        return "HeaderMutationError[" + code() + ": " + message() + "]";
    }

    private static String quotable(String s) {
        return Syntax.printable(s, MAX_QUOTED_NAME);
    }
}
