package dev.openshell.supervisor.engine.chain;

/**
 * A header section that breaks RFC 9112 section 5 field-line syntax. The whole request is an error: malformed field
 * lines are never dropped silently, since a downstream parser may read them differently (request smuggling).
 *
 * <p>The message names the line number and the rule, never the line's content.
 */
public final class MalformedHeaderException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;
    /** The platform code. */
    private final String code;
    /** The 1-based line number. */
    private final int line;

    /**
     * @param code the platform code, for example {@code header_obs_fold}
     * @param line the 1-based line number within the header section
     * @param rule the rule broken, in words
     */
    MalformedHeaderException(String code, int line, String rule) {
        super("malformed header field on line %d: %s".formatted(line, rule));
        this.code = code;
        this.line = line;
    }

    /**
     * {@return the platform code: {@code header_obs_fold}, {@code header_missing_colon},
     * {@code header_whitespace_before_colon}, {@code header_invalid_name}, {@code header_invalid_value} or
     * {@code header_bare_line_break}}
     */
    public String code() {
        return code;
    }

    /** {@return the 1-based line number within the header section} */
    public int line() {
        return line;
    }
}
