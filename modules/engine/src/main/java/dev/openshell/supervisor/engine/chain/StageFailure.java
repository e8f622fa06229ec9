package dev.openshell.supervisor.engine.chain;

import java.util.Objects;

/**
 * Why a stage failed, in platform-owned terms safe for clients and logs.
 *
 * @param category the kind of failure
 * @param code the stable platform code ({@link PlatformCodes}, a {@link HeaderMutationError.Kind#code()}, or the
 *     {@code [a-z][a-z0-9_]*} code of a {@link dev.openshell.middleware.spi.MiddlewareException})
 * @param message a safe message: for {@link Provenance#BUILT_IN} stages the provider's text reduced to
 *     {@code [A-Za-z0-9_\-: ]} (at most 160 characters); for {@link Provenance#THIRD_PARTY} stages the code itself
 */
public record StageFailure(FailureCategory category, String code, String message) {
    /** @throws NullPointerException if any part is {@code null} */
    public StageFailure {
        Objects.requireNonNull(category, "category");
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(message, "message");
    }
}
