package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.EnvelopeLimits;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;

/**
 * The envelope limits the {@link ChainEngine} checks around every stage (RFC 0009, "The middleware contract": "V1
 * applies explicit public envelope limits before invoking a service or accepting its result"), as one value that can
 * be handed around: the supervisor's engine and the conformance kit ({@code supervisor tck}) take the same object, so
 * both apply the same numbers. The contract's values are {@link #DEFAULT}, read from {@link EnvelopeLimits}; a limit
 * may only be tightened ({@link #with}), never raised above the contract, since services are built for the contract's
 * maxima. All sizes are bytes; "encoded" means the protobuf encoding measured by {@link EnvelopeSizes}.
 *
 * <p>Immutable and thread-safe.
 */
public final class StageLimits {
    /** One limit, with its contract value. */
    public enum Limit {
        /** Encoded config handed to a stage: 64 KiB. */
        CONFIG_BYTES(EnvelopeLimits.MAX_CONFIG_BYTES),
        /** Encoded request context: 4 KiB. */
        CONTEXT_BYTES(EnvelopeLimits.MAX_CONTEXT_BYTES),
        /** Encoded request target: 32 KiB. */
        TARGET_BYTES(EnvelopeLimits.MAX_TARGET_BYTES),
        /** Visible header lines handed to a stage: 128. */
        HEADER_LINES(EnvelopeLimits.MAX_HEADER_LINES),
        /** Encoded visible headers: 64 KiB. */
        HEADER_BYTES(EnvelopeLimits.MAX_HEADER_BYTES),
        /** Reason text of a result, UTF-8: 4 KiB. */
        REASON_BYTES(EnvelopeLimits.MAX_REASON_BYTES),
        /** Header mutations in one result: 64. */
        HEADER_MUTATIONS(EnvelopeLimits.MAX_HEADER_MUTATIONS),
        /** Encoded header mutations of one result: 64 KiB. */
        HEADER_MUTATION_ENCODED_BYTES(EnvelopeLimits.MAX_HEADER_MUTATION_ENCODED_BYTES),
        /** Findings in one result: 32. */
        FINDINGS(EnvelopeLimits.MAX_FINDINGS),
        /** One encoded finding: 4 KiB. */
        FINDING_BYTES(EnvelopeLimits.MAX_FINDING_BYTES),
        /** Metadata entries in one result: 64. */
        METADATA_ENTRIES(EnvelopeLimits.MAX_METADATA_ENTRIES),
        /** Metadata keys plus values, UTF-8: 32 KiB. */
        METADATA_BYTES(EnvelopeLimits.MAX_METADATA_BYTES);

        private final int contract;

        Limit(int contract) {
            this.contract = contract;
        }

        /** {@return the contract's value of this limit} */
        public int contractValue() {
            return contract;
        }
    }

    /** The contract's limits. */
    public static final StageLimits DEFAULT = new StageLimits(new EnumMap<>(Limit.class));

    private final Map<Limit, Integer> tightened;

    private StageLimits(Map<Limit, Integer> tightened) {
        this.tightened = tightened;
    }

    /** {@return the value of a limit} @param limit which */
    public int get(Limit limit) {
        Integer v = tightened.get(Objects.requireNonNull(limit, "limit"));
        return v == null ? limit.contractValue() : v;
    }

    /**
     * {@return a copy with one limit tightened}
     *
     * @param limit which
     * @param value the new value, 0 to the contract's value
     * @throws IllegalArgumentException if {@code value} is negative or above the contract's value
     */
    public StageLimits with(Limit limit, int value) {
        if (value < 0 || value > limit.contractValue()) {
            throw new IllegalArgumentException("%s %d is outside 0..%d (limits can only be tightened)"
                    .formatted(limit, value, limit.contractValue()));
        }
        Map<Limit, Integer> m = new EnumMap<>(Limit.class);
        m.putAll(tightened);
        m.put(limit, value);
        return new StageLimits(m);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof StageLimits other)) {
            return false;
        }
        for (Limit l : Limit.values()) {
            if (get(l) != other.get(l)) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (Limit l : Limit.values()) {
            h = 31 * h + get(l);
        }
        return h;
    }

    /** {@return the tightened limits only, e.g. {@code StageLimits[FINDINGS=4]}} */
    @Override
    public String toString() {
        return "StageLimits" + tightened;
    }
}
