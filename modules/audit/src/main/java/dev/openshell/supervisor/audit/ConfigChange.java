package dev.openshell.supervisor.audit;

/** Kinds of configuration event (class 5019). */
public enum ConfigChange {
    /** An external service registration was validated (Describe and manifest checks). */
    REGISTRATION_VALIDATION("middleware registration validation"),
    /** The first runtime generation was installed at start-up (the supervisor starts serving with it). */
    SUPERVISOR_START("supervisor start"),
    /**
     * A reload: a new runtime generation (policy + registry) was prepared and installed, a policy file is valid
     * again after a failed reload, or preparation failed (the current generation keeps serving).
     */
    REGISTRY_RELOAD("middleware registry reload"),
    /** A sandbox policy was validated. */
    POLICY_VALIDATION("policy validation"),
    /** A registration uses plaintext gRPC under {@code allow_insecure = true}. */
    INSECURE_REGISTRATION("insecure middleware registration"),
    /**
     * Binary scoping is off ({@code [openshell.supervisor.identity] mode = "endpoint-only"}): policies with
     * {@code binaries} admit every process. Always At Risk.
     */
    BINARY_SCOPING_OFF("binary scoping off (endpoint-only)"),
    /**
     * A policy endpoint says {@code upgrades: allow_uninspected}: the bytes after a protocol upgrade to it are
     * relayed without middleware inspection, even under a {@code fail_closed} chain.
     */
    UNINSPECTED_UPGRADES("uninspected upgrades allowed");

    private final String title;

    ConfigChange(String title) {
        this.title = title;
    }

    /** {@return the event title} */
    public String title() {
        return title;
    }
}
