package dev.openshell.middleware.spi;

import java.util.Objects;

/**
 * An audit-safe observation (RFC 0009, "Terminology": Finding; wire message {@code Finding}). A finding never
 * carries matched values, redacted spans or other raw content. At most {@link EnvelopeLimits#MAX_FINDINGS} (32) per
 * result, each at most {@link EnvelopeLimits#MAX_FINDING_BYTES} (4 KiB) encoded.
 *
 * @param type a machine-readable type, for example {@code pii.email} or {@code secret.openai_api_key}
 * @param label a safe display label; text from external services is untrusted and replaced by the host
 * @param count the number of matches, 0 or more
 * @param confidence a service-defined confidence marker, possibly empty
 * @param severity a service-defined severity marker, possibly empty
 */
public record Finding(String type, String label, long count, String confidence, String severity) {
    /**
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if {@code count} is negative or above 2^32 - 1
     */
    public Finding {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(label, "label");
        Objects.requireNonNull(confidence, "confidence");
        Objects.requireNonNull(severity, "severity");
        if (count < 0 || count > 0xFFFF_FFFFL) {
            throw new IllegalArgumentException("finding count " + count + " is outside 0..4294967295");
        }
    }

    /** {@return a finding with a type, label and count only} @param type the type @param label the label
     * @param count the count */
    public static Finding of(String type, String label, long count) {
        return new Finding(type, label, count, "", "");
    }
}
