package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.ClientConnection;
import dev.openshell.supervisor.proxy.PolicySteps;

/**
 * Admission by one generation ({@link PolicySteps.Admit}): L4 network policy, and for binary-scoped policies the
 * process behind the connection, which is identified only when such a policy could admit the destination (and then
 * once per connection, checked at each request: {@link Identify#revalidate}).
 *
 * @param generation the generation
 * @param identify the connection identities
 */
record AdmissionStep(Generation generation, Identify identify) implements PolicySteps.Admit {
    @Override
    public AdmissionDecision admit(String host, int port, ClientConnection client) {
        if (!generation.admission().scoped(host, port)) {
            return generation.admission().admit(host, port, Caller.unscoped()); // the caller cannot change it
        }
        return generation.admission().admit(host, port, Identities.caller(identify.of(client, host, port)));
    }

    @Override
    public boolean revalidate(String host, int port, ClientConnection client) {
        return identify.revalidate(client, host, port);
    }
}
