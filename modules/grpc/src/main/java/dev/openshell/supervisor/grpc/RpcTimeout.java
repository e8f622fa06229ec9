package dev.openshell.supervisor.grpc;

import dev.openshell.middleware.spi.EnvelopeLimits;
import java.time.Duration;
import java.util.Objects;

/**
 * The RFC's RPC timeout syntax (RFC 0009, "Registration and delivery": "RPC timeouts use an integer with an ms or s
 * suffix, range from 10 ms through 30 s, and default to 500 ms"). Used for a registration's {@code timeout} and a
 * binding's advertised {@code MiddlewareBinding.timeout}.
 *
 * <p>Grammar: one to nine ASCII digits followed by {@code ms} or {@code s}, nothing else (no sign, no space, no
 * fraction, no other unit). Range: {@link EnvelopeLimits#MIN_TIMEOUT_MILLIS} to
 * {@link EnvelopeLimits#MAX_TIMEOUT_MILLIS} milliseconds, inclusive.
 */
public final class RpcTimeout {
    /** The default when a registration sets none: 500 ms. */
    public static final Duration DEFAULT = Duration.ofMillis(EnvelopeLimits.DEFAULT_TIMEOUT_MILLIS);

    private RpcTimeout() {
    }

    /**
     * Parses a timeout.
     *
     * @param text for example {@code 500ms} or {@code 2s}; never {@code null}
     * @return the duration, within range
     * @throws IllegalArgumentException with a message that says which rule {@code text} breaks (the text itself is
     *     quoted only when it is short and printable)
     */
    public static Duration parse(String text) {
        Objects.requireNonNull(text, "text");
        int digits = 0;
        while (digits < text.length() && text.charAt(digits) >= '0' && text.charAt(digits) <= '9') {
            digits++;
        }
        String unit = text.substring(digits);
        if (digits == 0 || digits > 9 || !(unit.equals("ms") || unit.equals("s"))) {
            throw new IllegalArgumentException("timeout %s is not an integer with an 'ms' or 's' suffix (e.g. 500ms)"
                    .formatted(quote(text)));
        }
        long n = Long.parseLong(text.substring(0, digits));
        long millis = unit.equals("s") ? n * 1000 : n;
        if (millis < EnvelopeLimits.MIN_TIMEOUT_MILLIS || millis > EnvelopeLimits.MAX_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("timeout %s is outside %d ms..%d s".formatted(quote(text),
                    EnvelopeLimits.MIN_TIMEOUT_MILLIS, EnvelopeLimits.MAX_TIMEOUT_MILLIS / 1000));
        }
        return Duration.ofMillis(millis);
    }

    /**
     * Checks that a duration is within the RFC range.
     *
     * @param timeout a duration; never {@code null}
     * @return {@code timeout}
     * @throws IllegalArgumentException if it is outside 10 ms..30 s or not a whole number of milliseconds
     */
    public static Duration check(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        long ms = timeout.toMillis();
        if (!Duration.ofMillis(ms).equals(timeout) || ms < EnvelopeLimits.MIN_TIMEOUT_MILLIS
                || ms > EnvelopeLimits.MAX_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("timeout of %s is outside %d ms..%d s or not whole milliseconds"
                    .formatted(timeout, EnvelopeLimits.MIN_TIMEOUT_MILLIS, EnvelopeLimits.MAX_TIMEOUT_MILLIS / 1000));
        }
        return timeout;
    }

    /** {@return {@code timeout} in the RFC syntax, in milliseconds, e.g. {@code 500ms}} @param timeout a duration */
    public static String format(Duration timeout) {
        return timeout.toMillis() + "ms";
    }

    /** Quotes short printable ASCII text; describes anything else by its length only (it is untrusted). */
    static String quote(String text) {
        if (text.length() <= 32 && text.chars().allMatch(c -> c >= 0x20 && c < 0x7f)) {
            return "'" + text + "'";
        }
        return "(" + text.length() + " characters)";
    }
}
