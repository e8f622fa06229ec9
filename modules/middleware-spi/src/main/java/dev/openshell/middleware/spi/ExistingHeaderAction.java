package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import org.apiguardian.api.API;

/**
 * What a {@link HeaderMutation.WriteHeader} does when the header already exists (RFC 0009, "The middleware
 * contract"; wire enum {@code ExistingHeaderAction}).
 *
 * <p>All three real actions add the header when it is absent. {@link #UNSPECIFIED} and {@link #UNRECOGNIZED} mirror
 * what a protobuf peer can send; the host always rejects them, with the platform codes
 * {@code header_mutation_missing_existing_action} and {@code header_mutation_invalid_existing_action}.
 *
 * <p><b>An open enum:</b> a later minor version may add constants as the wire enum grows; a plugin that reads one
 * (rare: plugins write mutations) keeps a {@code default} branch.
 */
@API(status = STABLE, since = "0.1")
public enum ExistingHeaderAction {
    /** Wire value 0: the stage did not say. Always rejected. */
    UNSPECIFIED,
    /** Wire value 1: add one more line at the end, keeping earlier lines in order. */
    APPEND,
    /** Wire value 2: remove every line with that name, then add one at the end. */
    OVERWRITE,
    /** Wire value 3: keep the existing lines unchanged. */
    SKIP,
    /** A wire value this supervisor does not know. Always rejected. */
    UNRECOGNIZED
}
