package dev.openshell.supervisor.engine.chain;

/**
 * A stage's failure policy (RFC 0009, "Terminology": Failure policy; policy field {@code on_error}).
 */
public enum OnError {
    /**
     * A failure stops the chain and denies the request: the default whenever processing is required.
     * Wire/policy spelling {@code fail_closed}.
     */
    FAIL_CLOSED,
    /**
     * A failure leaves the request representation unchanged for that stage, records a bypass finding, and lets later
     * stages run. Only when the operator opts in. Wire/policy spelling {@code fail_open}.
     */
    FAIL_OPEN;

    /** {@return the policy spelling: {@code fail_closed} or {@code fail_open}} */
    public String policyName() {
        return this == FAIL_CLOSED ? "fail_closed" : "fail_open";
    }
}
