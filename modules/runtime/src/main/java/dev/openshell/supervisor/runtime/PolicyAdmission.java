package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.NetworkEndpoint;
import dev.openshell.supervisor.policy.NetworkPolicy;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.TlsMode;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.NetworkAdmission;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * L4 admission over {@code network_policies} (RFC 0009, "Operation phases and placement": network policy runs
 * first). Policies are tried in key order and their endpoints in file order; the first endpoint whose host pattern and
 * port admit the destination decides, and its facts ({@code tls: skip}, {@code allowed_ips}, protocol) go to the
 * proxy. A destination no endpoint admits is denied with a fixed message.
 */
final class PolicyAdmission implements NetworkAdmission {
    /** The client-visible reason for an L4 denial. */
    static final String DENIED = "no network policy allows this host and port";

    private record Entry(NetworkPolicy policy, NetworkEndpoint endpoint, EndpointFacts facts) {
    }

    private final List<Entry> entries;

    PolicyAdmission(SandboxPolicy policy) {
        List<Entry> list = new ArrayList<>();
        for (NetworkPolicy p : policy.networkPolicies().valuesView()) {
            for (NetworkEndpoint e : p.endpoints()) {
                EndpointFacts facts = new EndpointFacts(p.key(), e.tls() == TlsMode.SKIP, e.allowedIps().castToList(),
                        e.protocol().map(pr -> pr.toString().toLowerCase(Locale.ROOT).replace('_', '-')));
                list.add(new Entry(p, e, facts));
            }
        }
        this.entries = List.copyOf(list);
    }

    @Override
    public AdmissionDecision admit(String host, int port) {
        String canonical = HostPattern.canonicalHost(host);
        for (Entry e : entries) {
            if (e.endpoint().admits(canonical, port)) {
                return AdmissionDecision.allow(e.facts());
            }
        }
        return AdmissionDecision.deny(DENIED);
    }

    /** {@return the network policy key that admits {@code host:port}, if any (for {@code explain})} */
    Optional<String> admittingPolicy(String host, int port) {
        return admit(host, port) instanceof AdmissionDecision.Allowed a ? Optional.of(a.endpoint().policyName())
                : Optional.empty();
    }
}
