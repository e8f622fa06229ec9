package dev.openshell.supervisor.policy;

/**
 * A middleware config's failure policy (RFC 0009, "Terminology": Failure policy; "Failure behavior"): what happens
 * when the stage cannot return a valid result (error, timeout, malformed response, over-cap body).
 */
public enum OnError {
    /** Deny the request. The default. */
    FAIL_CLOSED("fail_closed"),
    /** Skip the stage, leave the request as it was, record a bypass finding, and run the rest of the chain. */
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
