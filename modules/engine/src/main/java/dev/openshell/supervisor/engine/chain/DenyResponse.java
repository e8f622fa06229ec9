package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.BindingId;
import jakarta.json.Json;
import jakarta.json.JsonObjectBuilder;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;

/**
 * The client response for a request the chain denied: HTTP 403 with a small JSON body (RFC 0009, "Audit and
 * logging": denied responses carry "stable platform-owned messages derived from the validated binding and failure
 * category").
 *
 * <p>Body shape, members in this order, {@code config_key} and {@code binding_id} omitted when no single stage is to
 * blame:
 * <pre>{@code {"error":"middleware_denied","detail":"...","config_key":"regex-redactor",
 *  "binding_id":"openshell/regex","reason_code":"secret_detected"}}</pre>
 *
 * <table>
 *   <caption>{@code error} values</caption>
 *   <tr><th>error</th><th>when</th></tr>
 *   <tr><td>{@value #MIDDLEWARE_DENIED}</td><td>a stage returned {@code DENY}</td></tr>
 *   <tr><td>{@value #MIDDLEWARE_FAILED}</td><td>a {@code fail_closed} stage failed (or the run was interrupted)</td></tr>
 *   <tr><td>{@value #POLICY_DENIED}</td><td>body-aware L7 policy denied a transformed request</td></tr>
 *   <tr><td>{@value #POLICY_FAILED}</td><td>the body-aware L7 re-check failed (a hard deny)</td></tr>
 *   <tr><td>{@value #UNINSPECTABLE}</td><td>the request cannot be inspected and a matching stage is
 *       {@code fail_closed}</td></tr>
 *   <tr><td>{@value #CHAIN_REFUSED}</td><td>more than 10 stages matched</td></tr>
 * </table>
 *
 * <p>{@code detail} is platform-owned. For a stage deny it is the built-in's reason reduced to
 * {@code [A-Za-z0-9_\-: ]} (at most 160 characters), or {@code request denied by middleware <binding ID>} for a
 * third-party stage. For a failure it is {@code middleware_failed: <reason>}, where the reason is the built-in's
 * sanitized message or, for a third-party stage, the platform code.
 *
 * @param error the error code (see the table)
 * @param detail a safe, platform-owned sentence
 * @param configKey the config key of the stage to blame, when there is one
 * @param bindingId the binding ID of that stage
 * @param reasonCode a {@code [a-z][a-z0-9_]*} code: the stage's own reason code for a deny, else a platform code
 */
public record DenyResponse(String error, String detail, Optional<String> configKey, Optional<BindingId> bindingId,
                           String reasonCode) {
    /** The HTTP status of every chain denial. */
    public static final int STATUS = 403;
    /** A stage returned {@code DENY}. */
    public static final String MIDDLEWARE_DENIED = "middleware_denied";
    /** A {@code fail_closed} stage failed. */
    public static final String MIDDLEWARE_FAILED = "middleware_failed";
    /** Body-aware L7 policy denied a transformed request. */
    public static final String POLICY_DENIED = "middleware_policy_denied";
    /** The body-aware L7 re-check failed. */
    public static final String POLICY_FAILED = "middleware_policy_failed";
    /** The request cannot be inspected and a matching stage is {@code fail_closed}. */
    public static final String UNINSPECTABLE = "middleware_uninspectable";
    /** More than 10 stages matched. */
    public static final String CHAIN_REFUSED = "middleware_chain_refused";

    /** @throws NullPointerException if any part is {@code null} */
    public DenyResponse {
        Objects.requireNonNull(error, "error");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(configKey, "configKey");
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(reasonCode, "reasonCode");
    }

    static DenyResponse forStage(String error, String detail, StageSpec stage, String reasonCode) {
        return new DenyResponse(error, detail, Optional.of(stage.configKey()), Optional.of(stage.bindingId()),
                reasonCode);
    }

    /** {@return the HTTP status: always {@value #STATUS}} */
    public int status() {
        return STATUS;
    }

    /** {@return the response body as compact JSON} */
    public String toJson() {
        JsonObjectBuilder b = Json.createObjectBuilder().add("error", error).add("detail", detail);
        configKey.ifPresent(k -> b.add("config_key", k));
        bindingId.ifPresent(id -> b.add("binding_id", id.value()));
        b.add("reason_code", reasonCode);
        return b.build().toString();
    }

    /** {@return the response body as UTF-8 JSON bytes, for {@code Content-Type: application/json}} */
    public byte[] toJsonBytes() {
        return toJson().getBytes(StandardCharsets.UTF_8);
    }
}
