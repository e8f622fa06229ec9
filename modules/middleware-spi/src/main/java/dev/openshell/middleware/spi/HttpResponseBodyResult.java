package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.apiguardian.api.API;

/**
 * A response stage's answer to one body unit (wire {@code HttpResponseBodyResult}): pass the unit through, or replace
 * it. There is no per-unit denial. A replacement is at most {@link HttpResponsePreflight#maxPayloadBytes()} bytes;
 * empty deletes the unit.
 *
 * @param sequence the answered unit's sequence; anything else is a stage failure
 * @param replacement empty to pass the unit through unchanged; present to replace it
 * @param reason a free-form diagnostic, at most 4096 bytes; never shown
 * @param reasonCode an optional code {@code [a-z][a-z0-9_]*} for audit; never shown to the sandbox
 * @param findings audit-safe findings (at most 32)
 * @param metadata non-secret metadata (at most 64 entries)
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record HttpResponseBodyResult(long sequence, Optional<Body> replacement, String reason,
                                     Optional<String> reasonCode, List<Finding> findings,
                                     Map<String, String> metadata) {
    /**
     * Checks the parts.
     *
     * @throws NullPointerException if a part is {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public HttpResponseBodyResult {
        Objects.requireNonNull(replacement, "replacement");
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(reasonCode, "reasonCode");
        findings = List.copyOf(findings);
        metadata = Map.copyOf(metadata);
    }

    /** {@return a pass-through of unit {@code sequence}} @param sequence the unit's sequence */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static HttpResponseBodyResult passThrough(long sequence) {
        return new HttpResponseBodyResult(sequence, Optional.empty(), "", Optional.empty(), List.of(), Map.of());
    }

    /**
     * {@return a replacement of unit {@code sequence}}
     *
     * @param sequence the unit's sequence
     * @param data the replacement bytes
     * @param findings what was found
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static HttpResponseBodyResult transform(long sequence, Body data, Finding... findings) {
        return new HttpResponseBodyResult(sequence, Optional.of(data), "", Optional.empty(), List.of(findings),
                Map.of());
    }

    /** {@return the sequence and sizes only} */
    @Override
    public String toString() {
        return "HttpResponseBodyResult[" + sequence + ", " + replacement.map(b -> b.size() + " bytes")
                .orElse("pass") + ", " + findings.size() + " findings]";
    }
}
