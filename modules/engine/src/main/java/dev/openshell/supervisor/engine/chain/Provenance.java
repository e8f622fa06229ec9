package dev.openshell.supervisor.engine.chain;

/**
 * Whose code a stage runs, which decides whether its text may be shown (RFC 0009, "Audit and logging": "Built-ins may
 * preserve contract-defined audit-safe reasons and finding fields. Operator-run reason text, finding text, mutation
 * errors, and diagnostic metadata are untrusted input").
 *
 * <p>The plugin host maps a provider's origin onto this: a built-in in the boot layer is {@link #BUILT_IN}; a
 * third-party plugin JAR and an external gRPC service are {@link #THIRD_PARTY}.
 */
public enum Provenance {
    /**
     * Ships with the supervisor ({@code openshell/} namespace, boot layer). Its reason, finding labels, exception
     * messages and metadata values are shown after sanitizing (see {@link StageRecord} and {@link DenyResponse}).
     */
    BUILT_IN,
    /**
     * A third-party plugin or an operator-run service. Its reason text, finding labels, exception messages and
     * unsafe metadata values are replaced by platform-owned text derived from the binding ID and failure category.
     */
    THIRD_PARTY
}
