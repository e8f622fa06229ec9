package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;
import static org.apiguardian.api.API.Status.STABLE;

import dev.openshell.middleware.spi.internal.Syntax;
import java.util.List;
import org.apiguardian.api.API;

/**
 * The public envelope limits of {@code openshell.middleware.v1}, in one place (RFC 0009, "The middleware contract":
 * "V1 applies explicit public envelope limits before invoking a service or accepting its result"; and "Policy
 * integration" for the policy-level counts).
 *
 * <p>All sizes are in bytes. The host checks inputs before invoking a stage and results before applying them; a
 * violation is a stage failure with a stable platform code and follows the stage's {@code on_error}.
 */
@API(status = STABLE, since = "0.1")
public final class EnvelopeLimits {
    /** Kibibyte, in bytes. */
    public static final int KIB = 1024;
    /** Mebibyte, in bytes. */
    public static final int MIB = 1024 * KIB;

    /** Largest request body any stage may receive or return: 4 MiB (the platform maximum). */
    public static final int MAX_BODY_BYTES = 4 * MIB;
    /** Largest encoded middleware config: 64 KiB. */
    public static final int MAX_CONFIG_BYTES = 64 * KIB;
    /** Largest encoded request context: 4 KiB. */
    public static final int MAX_CONTEXT_BYTES = 4 * KIB;
    /** Largest encoded request target: 32 KiB. */
    public static final int MAX_TARGET_BYTES = 32 * KIB;
    /** Most header lines handed to a stage: 128. */
    public static final int MAX_HEADER_LINES = 128;
    /** Largest encoded header list handed to a stage: 64 KiB. */
    public static final int MAX_HEADER_BYTES = 64 * KIB;
    /** Largest reason text in a result: 4 KiB. */
    public static final int MAX_REASON_BYTES = 4 * KIB;
    /** Most header mutations in one result: 64. */
    public static final int MAX_HEADER_MUTATIONS = 64;
    /** Largest validated mutation data (lowercased name plus value for writes, name for removes): 32 KiB. */
    public static final int MAX_HEADER_MUTATION_BYTES = 32 * KIB;
    /** Largest encoded mutation list: 64 KiB. */
    public static final int MAX_HEADER_MUTATION_ENCODED_BYTES = 64 * KIB;
    /** Most findings in one result: 32. */
    public static final int MAX_FINDINGS = 32;
    /** Largest encoded single finding: 4 KiB. */
    public static final int MAX_FINDING_BYTES = 4 * KIB;
    /** Most metadata entries in one result: 64. */
    public static final int MAX_METADATA_ENTRIES = 64;
    /** Largest total metadata (keys plus values, UTF-8): 32 KiB. */
    public static final int MAX_METADATA_BYTES = 32 * KIB;
    /** Most stages in one chain, and most middleware configs in one policy: 10. */
    public static final int MAX_CHAIN_STAGES = 10;
    /** Most include plus exclude host patterns in one middleware config: 32. */
    public static final int MAX_SELECTOR_PATTERNS = 32;
    /**
     * Smallest gRPC message limit that carries a full evaluation: the 4 MiB body plus 292 KiB for the rest of the
     * envelope.
     */
    public static final int MIN_GRPC_MESSAGE_BYTES = MAX_BODY_BYTES + 292 * KIB;
    /** Shortest stage RPC timeout, in milliseconds. */
    public static final long MIN_TIMEOUT_MILLIS = 10;
    /** Longest stage RPC timeout, in milliseconds. */
    public static final long MAX_TIMEOUT_MILLIS = 30_000;
    /** Stage RPC timeout when none is configured, in milliseconds. */
    public static final long DEFAULT_TIMEOUT_MILLIS = 500;

    private EnvelopeLimits() {
    }

    /**
     * {@return the validated data of one header mutation, bytes, as {@link #MAX_HEADER_MUTATION_BYTES} counts it}:
     * the name's length (a field name is an ASCII token, so its lowercased form has as many bytes) plus, for a write,
     * the value's UTF-8 length.
     *
     * @param m a mutation; never {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static long headerMutationBytes(HeaderMutation m) {
        long name = m.name().length();
        return m instanceof HeaderMutation.WriteHeader w ? name + Syntax.utf8Length(w.value()) : name;
    }

    /**
     * {@return whether one result may carry this many header mutations of this size}: at most
     * {@link #MAX_HEADER_MUTATIONS} mutations and at most {@link #MAX_HEADER_MUTATION_BYTES} of validated data
     * ({@link #headerMutationBytes}). The host also checks each name and value and refuses a list that breaks any rule
     * as a stage failure; a stage that builds a list can ask this first and decide otherwise rather than fail.
     *
     * @param mutations the mutations of one result; never {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static boolean headerMutationsFit(List<? extends HeaderMutation> mutations) {
        if (mutations.size() > MAX_HEADER_MUTATIONS) {
            return false;
        }
        long bytes = 0;
        for (HeaderMutation m : mutations) {
            bytes += headerMutationBytes(m);
        }
        return bytes <= MAX_HEADER_MUTATION_BYTES;
    }
}
