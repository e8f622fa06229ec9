package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Everything a chain run produced: the outcome for the proxy, and per-stage records, findings, metadata and re-checks
 * for audit.
 *
 * @param outcome forward or deny
 * @param stages one record per stage that ran, in order; stages after a deny never ran and have no record
 * @param headers the complete header list to forward (names lowercased), after every accepted mutation;
 *     unmodifiable
 * @param body the body to forward, after every accepted replacement
 * @param metadata the metadata bag, namespaced by config key
 * @param rechecks the body-aware policy re-checks run, in order
 * @param skipped the stages not invoked because the body that would have reached them was empty and their binding
 *     declares {@link dev.openshell.middleware.spi.MiddlewareBinding#skipEmptyBody()}, in order; they have no record
 *     in {@code stages}
 */
public record ChainResult(ChainOutcome outcome, List<StageRecord> stages, List<HttpHeader> headers, Body body,
                          ChainMetadata metadata, List<RecheckRecord> rechecks, List<StageSpec> skipped) {
    /** @throws NullPointerException if any part is {@code null} */
    public ChainResult {
        Objects.requireNonNull(outcome, "outcome");
        stages = List.copyOf(stages);
        skipped = List.copyOf(skipped);
        headers = List.copyOf(headers);
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(metadata, "metadata");
        rechecks = List.copyOf(rechecks);
    }

    /** {@return whether the request goes upstream} */
    public boolean forwarded() {
        return outcome instanceof ChainOutcome.Forward;
    }

    /** {@return the 403 to send, when denied} */
    public Optional<DenyResponse> denial() {
        return outcome instanceof ChainOutcome.Deny d ? Optional.of(d.response()) : Optional.empty();
    }

    /** {@return whether any stage's transformation was accepted} */
    public boolean transformed() {
        return stages.stream().anyMatch(StageRecord::transformed);
    }

    /** {@return every stage's findings, in stage order} */
    public List<Finding> findings() {
        return stages.stream().flatMap(s -> s.findings().stream()).toList();
    }

    /** {@return whether any stage was bypassed after a {@code fail_open} failure} */
    public boolean bypassed() {
        return stages.stream().anyMatch(StageRecord::bypassed);
    }
}
