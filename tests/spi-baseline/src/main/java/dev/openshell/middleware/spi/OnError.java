package dev.openshell.middleware.spi;

/**
 * A middleware config's failure policy, policy field {@code on_error} (RFC 0009, "Terminology": Failure policy;
 * "Failure behavior"): what happens when a stage cannot return a valid result (an error, a timeout, a malformed or
 * over-limit result, an over-cap body). The one definition: the policy loader, the chain engine and the runtime all
 * use this type.
 */
public enum OnError {
    /**
     * A failure stops the chain and denies the request: the default whenever processing is required. Policy spelling
     * {@code fail_closed}.
     */
    FAIL_CLOSED("fail_closed"),
    /**
     * A failure leaves the request as that stage received it, records a bypass finding, and lets later stages run.
     * Only when the operator opts in. Policy spelling {@code fail_open}.
     */
    FAIL_OPEN("fail_open");

    private final String policyName;

    OnError(String policyName) {
        this.policyName = policyName;
    }

    /** {@return the spelling in policy files: {@code fail_closed} or {@code fail_open}} */
    public String policyName() {
        return policyName;
    }
}
