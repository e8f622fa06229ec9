package dev.openshell.middleware.spi;

import java.time.Duration;
import java.util.Objects;

/**
 * Middleware RPC timeouts (RFC 0009, "Registration and delivery"): "an integer with an ms or s suffix, range from
 * 10 ms through 30 s, and default to 500 ms". The one home of that rule: a registration's {@code timeout} in the
 * gateway configuration, a binding's advertised {@code MiddlewareBinding.timeout} on the wire and in
 * {@link MiddlewareBinding} all use it.
 *
 * <p>Grammar: one to nine ASCII digits, then {@code ms} or {@code s}, nothing else (no sign, no spaces, no
 * fractions, no other unit): {@code 500ms}, {@code 2s}, {@code 0030s}. Range: {@link #MIN} to {@link #MAX}
 * inclusive, in whole milliseconds ({@link EnvelopeLimits#MIN_TIMEOUT_MILLIS},
 * {@link EnvelopeLimits#MAX_TIMEOUT_MILLIS}).
 */
public final class RpcTimeout {
    /** The shortest timeout: 10 ms. */
    public static final Duration MIN = Duration.ofMillis(EnvelopeLimits.MIN_TIMEOUT_MILLIS);
    /** The longest timeout: 30 s. */
    public static final Duration MAX = Duration.ofMillis(EnvelopeLimits.MAX_TIMEOUT_MILLIS);
    /** The timeout when none is configured: 500 ms. */
    public static final Duration DEFAULT = Duration.ofMillis(EnvelopeLimits.DEFAULT_TIMEOUT_MILLIS);

    private static final String RANGE = "it must be from 10ms to 30s";

    private RpcTimeout() {
    }

    /**
     * Parses a timeout.
     *
     * @param text the timeout as written, for example {@code 500ms}; never {@code null}
     * @return the duration, from {@link #MIN} to {@link #MAX}
     * @throws IllegalArgumentException with the message {@code invalid timeout '<text>': <reason>} (the text quoted
     *     by {@link Syntax#quote(String)}: it is untrusted)
     */
    public static Duration parse(String text) {
        Objects.requireNonNull(text, "timeout");
        String problem = problem(text);
        if (problem != null) {
            throw new IllegalArgumentException("invalid timeout " + Syntax.quote(text) + ": " + problem);
        }
        return toDuration(text);
    }

    /**
     * {@return {@code null} when {@code text} is a valid timeout, else why not}
     *
     * @param text a candidate timeout; never {@code null}
     */
    public static String problem(String text) {
        if (text.isEmpty()) {
            return "it is empty";
        }
        int unit = text.endsWith("ms") ? text.length() - 2 : text.endsWith("s") ? text.length() - 1 : -1;
        if (unit <= 0 || !text.substring(0, unit).chars().allMatch(c -> c >= '0' && c <= '9')) {
            return "write an integer followed by ms or s, such as 500ms or 2s";
        }
        if (unit > 9) {
            return RANGE;
        }
        return problem(toDuration(text));
    }

    /**
     * {@return {@code null} when {@code timeout} is within range in whole milliseconds, else why not}
     *
     * @param timeout a duration; never {@code null}
     */
    public static String problem(Duration timeout) {
        if (timeout.compareTo(MIN) < 0 || timeout.compareTo(MAX) > 0) {
            return RANGE;
        }
        if (!Duration.ofMillis(timeout.toMillis()).equals(timeout)) {
            return "it must be a whole number of milliseconds";
        }
        return null;
    }

    /**
     * Checks a duration against the range.
     *
     * @param timeout a duration; never {@code null}
     * @return {@code timeout}
     * @throws IllegalArgumentException with the message {@code invalid timeout <format>: <reason>} if it is outside
     *     10 ms..30 s or not whole milliseconds
     */
    public static Duration check(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        String problem = problem(timeout);
        if (problem != null) {
            throw new IllegalArgumentException("invalid timeout " + timeout + ": " + problem);
        }
        return timeout;
    }

    private static Duration toDuration(String text) {
        return text.endsWith("ms")
                ? Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)))
                : Duration.ofSeconds(Long.parseLong(text.substring(0, text.length() - 1)));
    }

    /**
     * {@return {@code d} in this syntax: whole seconds as {@code Ns}, else {@code Nms}}; {@link #parse(String)} reads
     * it back to {@code d} for every duration in range
     *
     * @param d a duration in whole milliseconds
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }
}
