package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.internal.StageResult;
import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.supervisor.engine.chain.StageLimits.Limit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One stage's attempt as the {@link ChainEngine} sees it: the answer checked against the contract's limits, or the
 * failure (timeout, interruption, exception, invalid result) with its category and platform code, and the records
 * and findings a failure leaves. Messages are the sanitized text for built-ins and the code for third parties.
 */
final class StageAttempts {

    private StageAttempts() {
    }

    /**
     * Checks a stage's answer against the limits of RFC 0009 ("The middleware contract"): reason size and code
     * shape, header-mutation count and size, findings, metadata keys, values and size.
     *
     * @return the failure, or {@code null} when the answer is within every limit
     */
    static StageFailure checkResult(StageSpec s, HttpRequestResult r, StageLimits limits, HeaderRules rules) {
        if (r == null) {
            return failure(s, FailureCategory.INVALID_RESULT, PlatformCodes.RESULT_MISSING, "stage returned no result");
        }
        if (Wire.utf8Length(r.reason()) > limits.get(Limit.REASON_BYTES)) {
            return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.REASON_BYTES_OVER_CAPACITY,
                    "reason exceeds " + limits.get(Limit.REASON_BYTES) + " bytes");
        }
        if (r.reasonCode().isPresent() && !Syntax.isCode(r.reasonCode().get())) {
            return failure(s, FailureCategory.INVALID_RESULT, PlatformCodes.RESULT_INVALID_REASON_CODE,
                    "reason code is not a lowercase code of at most 64 characters");
        }
        List<HeaderMutation> mutations = r.headerMutations();
        if (mutations.size() > limits.get(Limit.HEADER_MUTATIONS)) {
            HeaderMutationError e = new HeaderMutationError(HeaderMutationError.Kind.TOO_MANY, "", mutations.size());
            rules.count(e.kind());
            return failure(s, FailureCategory.INVALID_HEADER_MUTATION, e.code(), e.message());
        }
        if (Wire.mutations(mutations) > limits.get(Limit.HEADER_MUTATION_ENCODED_BYTES)) {
            return failure(s, FailureCategory.ENVELOPE_VIOLATION, HeaderMutationError.Kind.TOO_LARGE.code(),
                    "middleware header mutations exceed " + limits.get(Limit.HEADER_MUTATION_ENCODED_BYTES)
                            + " encoded bytes");
        }
        if (r.findings().size() > limits.get(Limit.FINDINGS)) {
            return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.FINDING_COUNT_OVER_CAPACITY,
                    r.findings().size() + " findings exceed " + limits.get(Limit.FINDINGS));
        }
        for (Finding f : r.findings()) {
            if (Wire.finding(f) > limits.get(Limit.FINDING_BYTES)) {
                return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.FINDING_BYTES_OVER_CAPACITY,
                        "a finding exceeds " + limits.get(Limit.FINDING_BYTES) + " encoded bytes");
            }
        }
        Map<String, String> metadata = r.metadata();
        if (metadata.size() > limits.get(Limit.METADATA_ENTRIES)) {
            return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.METADATA_COUNT_OVER_CAPACITY,
                    metadata.size() + " metadata entries exceed " + limits.get(Limit.METADATA_ENTRIES));
        }
        long metadataBytes = 0;
        for (Map.Entry<String, String> e : metadata.entrySet()) {
            if (!isMetadataKey(e.getKey())) {
                return failure(s, FailureCategory.INVALID_RESULT, PlatformCodes.METADATA_INVALID_KEY,
                        "a metadata key is not [A-Za-z0-9][A-Za-z0-9_.-]* of at most 128 characters");
            }
            if (!SafeText.hasNoControls(e.getValue())) {
                return failure(s, FailureCategory.INVALID_RESULT, PlatformCodes.METADATA_INVALID_VALUE,
                        "a metadata value holds a control character");
            }
            metadataBytes += Wire.utf8Length(e.getKey()) + Wire.utf8Length(e.getValue());
        }
        if (metadataBytes > limits.get(Limit.METADATA_BYTES)) {
            return failure(s, FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.METADATA_BYTES_OVER_CAPACITY,
                    "metadata exceeds " + limits.get(Limit.METADATA_BYTES) + " bytes");
        }
        return null;
    }

    static Attempt timedOut(StageSpec s) {
        return failed(s, FailureCategory.TIMEOUT, PlatformCodes.STAGE_TIMEOUT,
                "stage did not answer within " + s.timeoutMillis() + " ms");
    }

    static Attempt interrupted(StageSpec s) {
        return new Attempt.Failed(failure(s, FailureCategory.STAGE_ERROR, PlatformCodes.CHAIN_INTERRUPTED,
                "interrupted while waiting for the stage"), true);
    }

    static Attempt thrown(StageSpec s, Throwable cause) {
        if (cause instanceof VirtualMachineError e) {
            throw e;
        }
        if (cause instanceof MiddlewareException me && Syntax.isCode(me.code())) {
            return failed(s, FailureCategory.STAGE_ERROR, me.code(),
                    me.getMessage() == null ? me.code() : me.getMessage());
        }
        String text = cause == null || cause.getMessage() == null ? "stage threw an exception" : cause.getMessage();
        return failed(s, FailureCategory.STAGE_ERROR, PlatformCodes.STAGE_EXCEPTION, text);
    }

    static Attempt failed(StageSpec s, FailureCategory category, String code, String text) {
        return new Attempt.Failed(failure(s, category, code, text), false);
    }

    /** A failure whose message is the sanitized text for built-ins and the code for third parties. */
    static StageFailure failure(StageSpec s, FailureCategory category, String code, String text) {
        return new StageFailure(category, code, s.trusted() ? SafeText.safeReason(text) : code);
    }

    static StageRecord failedRecord(StageSpec s, StageResult outcome, long latency, StageFailure failure,
                                            List<Finding> findings) {
        return new StageRecord(s.configKey(), s.bindingId(), s.provenance(), s.onError(), outcome, Optional.empty(),
                Optional.empty(), false, false, latency, Optional.of(failure), findings);
    }

    static List<Finding> sanitize(StageSpec s, List<Finding> findings) {
        if (findings.isEmpty()) {
            return findings;
        }
        List<Finding> out = new ArrayList<>(findings.size());
        String label = "finding reported by " + s.bindingId();
        for (Finding f : findings) {
            out.add(new Finding(
                    SafeText.isLowerToken(f.type(), 128, "_.-") ? f.type() : PlatformCodes.FINDING_UNCLASSIFIED,
                    label, f.count(),
                    SafeText.isLowerToken(f.confidence(), 32, "_.-") ? f.confidence() : "",
                    SafeText.isLowerToken(f.severity(), 32, "_.-") ? f.severity() : ""));
        }
        return out;
    }

    static boolean isMetadataKey(String key) {
        if (key.isEmpty() || key.length() > 128) {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
            if (!alnum && (i == 0 || (c != '_' && c != '.' && c != '-'))) {
                return false;
            }
        }
        return true;
    }

    /** A stage's answer, or why there is none. @param value the answer @param failed the failure, or null */
    record Invoked<T>(T value, Attempt failed) {
    }

    /** The outcome of one stage's steps 1 to 4. */
    sealed interface Attempt {
        /** @param result the validated result @param headers the new header list, or {@code null} if unchanged */
        record Accepted(HttpRequestResult result, List<HttpHeader> headers) implements Attempt {
        }

        /** @param failure why @param interrupted whether the caller was interrupted (always denies) */
        record Failed(StageFailure failure, boolean interrupted) implements Attempt {
        }
    }
}
