package dev.openshell.supervisor.engine.chain;

/**
 * The stable platform codes of the chain engine, besides the header mutation codes of
 * {@link HeaderMutationError.Kind}. Codes are {@code [a-z][a-z0-9_]*}, safe for clients and logs, and never change
 * meaning. The table with each code's category is in {@code docs/chain-engine.md}.
 */
public final class PlatformCodes {
    // input envelope (checked before a stage is invoked)
    /** The stage's encoded config is over 64 KiB. */
    public static final String CONFIG_BYTES_OVER_CAPACITY = "config_bytes_over_capacity";
    /** The encoded request context is over 4 KiB. */
    public static final String CONTEXT_BYTES_OVER_CAPACITY = "context_bytes_over_capacity";
    /** The encoded request target is over 32 KiB. */
    public static final String TARGET_BYTES_OVER_CAPACITY = "target_bytes_over_capacity";
    /** More than 128 header lines would be handed to the stage. */
    public static final String HEADER_COUNT_OVER_CAPACITY = "header_count_over_capacity";
    /** The encoded headers handed to the stage are over 64 KiB. */
    public static final String HEADER_BYTES_OVER_CAPACITY = "header_bytes_over_capacity";
    /** The body is larger than the stage's {@code max_body_bytes}. */
    public static final String BODY_BYTES_OVER_CAPACITY = "body_bytes_over_capacity";
    /** The {@code Content-Encoding} decoded for the stages is not valid data of its coding. */
    public static final String BODY_DECODING_FAILED = "body_decoding_failed";
    /** The decoded body would exceed the chain's body limit or 200 times its encoded size (a decompression bomb). */
    public static final String DECODED_BODY_OVER_CAPACITY = "decoded_body_over_capacity";

    // invocation
    /** The stage did not answer within its timeout. */
    public static final String STAGE_TIMEOUT = "stage_timeout";
    /** The provider threw something other than a {@code MiddlewareException} with a valid code. */
    public static final String STAGE_EXCEPTION = "stage_exception";
    /**
     * The stage was not run: its binding has as many stages stuck past their timeout as the stage pool allows
     * ({@link StagePool}).
     */
    public static final String MIDDLEWARE_UNAVAILABLE = "middleware_unavailable";
    /** The stage was not run: every stage pool thread is busy and its queue is full ({@link StagePool}). */
    public static final String STAGE_THREADS_BUSY = "stage_threads_busy";
    /** The thread running the chain was interrupted while waiting for a stage (the request is denied). */
    public static final String CHAIN_INTERRUPTED = "chain_interrupted";

    // result envelope and shape
    /** The provider returned {@code null}. */
    public static final String RESULT_MISSING = "result_missing";
    /** The result's reason code is not {@code [a-z][a-z0-9_]*} of 1 to 64 characters. */
    public static final String RESULT_INVALID_REASON_CODE = "result_invalid_reason_code";
    /** The result's reason is over 4 KiB of UTF-8. */
    public static final String REASON_BYTES_OVER_CAPACITY = "reason_bytes_over_capacity";
    /** More than 32 findings in one result. */
    public static final String FINDING_COUNT_OVER_CAPACITY = "finding_count_over_capacity";
    /** A finding is over 4 KiB encoded. */
    public static final String FINDING_BYTES_OVER_CAPACITY = "finding_bytes_over_capacity";
    /** More than 64 metadata entries in one result. */
    public static final String METADATA_COUNT_OVER_CAPACITY = "metadata_count_over_capacity";
    /** Metadata keys plus values are over 32 KiB of UTF-8. */
    public static final String METADATA_BYTES_OVER_CAPACITY = "metadata_bytes_over_capacity";
    /** A metadata key is not {@code [A-Za-z0-9][A-Za-z0-9_.-]*} of at most 128 characters. */
    public static final String METADATA_INVALID_KEY = "metadata_invalid_key";
    /** A metadata value holds a control character. */
    public static final String METADATA_INVALID_VALUE = "metadata_invalid_value";

    // post-credentials stage results (RestrictedMiddlewareProvider's contract, checked by PostCredentialsRules)
    /** A post-credentials stage's provider is not a restricted built-in. */
    public static final String POST_CREDENTIALS_NOT_RESTRICTED = "post_credentials_not_restricted";
    /** A post-credentials stage changed the target (scheme, host, port, method, path or query). */
    public static final String POST_CREDENTIALS_TARGET_CHANGED = "post_credentials_target_changed";
    /** A post-credentials stage changed the body. */
    public static final String POST_CREDENTIALS_BODY_CHANGED = "post_credentials_body_changed";
    /** A post-credentials stage changed, added or removed a {@code Host} field. */
    public static final String POST_CREDENTIALS_HOST_CHANGED = "post_credentials_host_changed";
    /** A post-credentials stage added a hop-by-hop or framing field. */
    public static final String POST_CREDENTIALS_FORBIDDEN_HEADER = "post_credentials_forbidden_header";
    /** A post-credentials stage returned a field whose name is not a token or whose value is not safe. */
    public static final String POST_CREDENTIALS_INVALID_HEADER = "post_credentials_invalid_header";

    // chain level
    /** More than 10 stages matched the request. */
    public static final String CHAIN_STAGE_COUNT_OVER_CAPACITY = "chain_stage_count_over_capacity";
    /** The body-aware policy re-check threw or returned nothing after a body replacement (a hard deny). */
    public static final String BODY_RECHECK_FAILED = "body_recheck_failed";
    /** The reason code of a stage deny that gave none. */
    public static final String MIDDLEWARE_DENIED = "middleware_denied";
    /** The reason code of a body-aware policy denial that gave none. */
    public static final String BODY_RECHECK_DENIED = "body_recheck_denied";
    /** The default cause of an uninspectable request. */
    public static final String REQUEST_UNINSPECTABLE = "request_uninspectable";

    // finding types recorded by the engine
    /** Finding type of a {@code fail_open} stage failure. */
    public static final String FINDING_BYPASS = "openshell.middleware.bypass";
    /** Finding type of an uninspectable request relayed because every matching stage is {@code fail_open}. */
    public static final String FINDING_UNINSPECTABLE_BYPASS = "openshell.middleware.uninspectable_bypass";
    /**
     * Finding type (severity {@code high}) on the record of a stage that was not run because its binding is
     * unavailable ({@link #MIDDLEWARE_UNAVAILABLE}).
     */
    public static final String FINDING_UNAVAILABLE = "openshell.middleware.unavailable";
    /** Finding type that replaces a third-party finding type outside {@code [a-z0-9][a-z0-9_.-]*}. */
    public static final String FINDING_UNCLASSIFIED = "middleware.unclassified";

    private PlatformCodes() {
    }
}
