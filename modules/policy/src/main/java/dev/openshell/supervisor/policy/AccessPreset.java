package dev.openshell.supervisor.policy;

/** An endpoint's L7 access preset (OpenShell policy {@code access}), interpreted by the L7 policy engine. */
public enum AccessPreset {
    /** Safe methods only. */
    READ_ONLY("read-only"),
    /** Safe and state-changing methods except deletion. */
    READ_WRITE("read-write"),
    /** Every method. */
    FULL("full");

    private final String policyName;

    AccessPreset(String policyName) {
        this.policyName = policyName;
    }

    /** {@return the spelling in policy files} */
    public String policyName() {
        return policyName;
    }
}
