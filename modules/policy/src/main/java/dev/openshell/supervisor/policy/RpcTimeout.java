package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.supervisor.policy.internal.Texts;

import java.time.Duration;
import java.util.Objects;

/**
 * Middleware RPC timeouts (RFC 0009, "Registration and delivery"): "an integer with an ms or s suffix, range from
 * 10 ms through 30 s, and default to 500 ms". The same syntax serves registrations in the gateway configuration and
 * binding timeouts advertised through {@code Describe}.
 *
 * <p>Grammar: one to nine ASCII digits, then {@code ms} or {@code s}, nothing else (no sign, no spaces, no
 * fractions): {@code 500ms}, {@code 2s}, {@code 0030s}.
 */
public final class RpcTimeout {
    /** The shortest timeout: 10 ms. */
    public static final Duration MIN = Duration.ofMillis(EnvelopeLimits.MIN_TIMEOUT_MILLIS);
    /** The longest timeout: 30 s. */
    public static final Duration MAX = Duration.ofMillis(EnvelopeLimits.MAX_TIMEOUT_MILLIS);
    /** The timeout when none is configured: 500 ms. */
    public static final Duration DEFAULT = Duration.ofMillis(EnvelopeLimits.DEFAULT_TIMEOUT_MILLIS);

    private RpcTimeout() {
    }

    /**
     * Parses a timeout.
     *
     * @param text the timeout as written, for example {@code 500ms}
     * @return the duration, from {@link #MIN} to {@link #MAX}
     * @throws IllegalArgumentException with the message {@code invalid timeout '<text>': <reason>}
     */
    public static Duration parse(String text) {
        Objects.requireNonNull(text, "timeout");
        String problem = problem(text);
        if (problem != null) {
            throw new IllegalArgumentException("invalid timeout " + Texts.quote(text) + ": " + problem);
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
            return "it must be from 10ms to 30s";
        }
        Duration d = toDuration(text);
        if (d.compareTo(MIN) < 0 || d.compareTo(MAX) > 0) {
            return "it must be from 10ms to 30s";
        }
        return null;
    }

    private static Duration toDuration(String text) {
        return text.endsWith("ms")
                ? Duration.ofMillis(Long.parseLong(text.substring(0, text.length() - 2)))
                : Duration.ofSeconds(Long.parseLong(text.substring(0, text.length() - 1)));
    }

    /**
     * {@return {@code d} in this syntax: whole seconds as {@code Ns}, else {@code Nms}}
     *
     * @param d a duration
     */
    public static String format(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
    }
}
