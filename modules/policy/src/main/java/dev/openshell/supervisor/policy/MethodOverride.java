package dev.openshell.supervisor.policy;

/**
 * What an L7 endpoint does with a request that asks the upstream to apply another method than its own (the
 * {@code method_override} key of {@code protocol: rest} and {@code websocket} endpoints; {@code docs/policy-reference.md},
 * "Method override"): the {@code X-HTTP-Method-Override}, {@code X-HTTP-Method} and {@code X-Method-Override} header
 * fields and a {@code _method} parameter in the query or in a form or JSON body, which web frameworks honour.
 */
public enum MethodOverride {
    /** Refuse a request that carries any override form (400, code {@code method_override}). The default. */
    REFUSE("refuse"),
    /** Judge the request by the overriding method: the upstream honours the override. */
    EVALUATE("evaluate"),
    /** Judge the request by its own method: the upstream honours no override. */
    IGNORE("ignore");

    private final String policyName;

    MethodOverride(String policyName) {
        this.policyName = policyName;
    }

    /** {@return the spelling in policy files} */
    public String policyName() {
        return policyName;
    }
}
