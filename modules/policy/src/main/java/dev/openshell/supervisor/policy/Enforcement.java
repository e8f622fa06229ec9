package dev.openshell.supervisor.policy;

/**
 * How an endpoint's L7 policy acts on a violation (OpenShell policy {@code enforcement}). Middleware denials and
 * {@code fail_closed} stay blocking in both modes (RFC 0009, "Operation phases and placement").
 */
public enum Enforcement {
    /** Block disallowed requests. The default. */
    ENFORCE("enforce"),
    /** Log violations and let the traffic through. */
    AUDIT("audit");

    private final String policyName;

    Enforcement(String policyName) {
        this.policyName = policyName;
    }

    /** {@return the spelling in policy files} */
    public String policyName() {
        return policyName;
    }
}
