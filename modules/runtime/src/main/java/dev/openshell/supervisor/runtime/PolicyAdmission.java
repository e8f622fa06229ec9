package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.policy.Caller;
import dev.openshell.supervisor.policy.HostPattern;
import dev.openshell.supervisor.policy.NetworkEndpoint;
import dev.openshell.supervisor.policy.NetworkPolicy;
import dev.openshell.supervisor.policy.SandboxPolicy;
import dev.openshell.supervisor.policy.TlsMode;
import dev.openshell.supervisor.proxy.AdmissionDecision;
import dev.openshell.supervisor.proxy.EndpointFacts;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * L4 admission over {@code network_policies} (RFC 0009, "Operation phases and placement": network policy runs
 * first). Policies are tried in key order and their endpoints in file order; the first endpoint whose host pattern and
 * port admit the destination, in a policy whose {@code binaries} admit the caller ({@link NetworkPolicy#admitsCaller}),
 * decides, and its facts ({@code tls: skip}, {@code allowed_ips}, protocol) go to the proxy. A destination no endpoint
 * admits is denied with a fixed message; one that only binary-scoped policies admit, for another binary or an
 * unidentified caller, is denied with a message that names the first such policy and why.
 */
final class PolicyAdmission {
    /** The client-visible reason for an L4 denial. */
    static final String DENIED = "no network policy allows this host and port";
    /** The caller when a connection carries no identity ({@link #admit(String, int)}). */
    static final Caller.Unidentified NO_IDENTITY = new Caller.Unidentified("this connection carries no process identity");

    private record Entry(NetworkPolicy policy, NetworkEndpoint endpoint, EndpointFacts facts) {
    }

    private final List<Entry> entries;

    PolicyAdmission(SandboxPolicy policy) {
        List<Entry> list = new ArrayList<>();
        for (NetworkPolicy p : policy.networkPolicies().valuesView()) {
            for (NetworkEndpoint e : p.endpoints()) {
                EndpointFacts facts = new EndpointFacts(p.key(), e.tls() == TlsMode.SKIP, e.allowedIps().castToList(),
                        e.protocol().map(pr -> pr.toString().toLowerCase(Locale.ROOT).replace('_', '-')),
                        e.upgradesAllowed(), e.traceAllowed(), e.binaryMessagesAllowed());
                list.add(new Entry(p, e, facts));
            }
        }
        this.entries = List.copyOf(list);
    }

    /** Admits without a process identity: binary-scoped policies do not admit. */
    AdmissionDecision admit(String host, int port) {
        return admit(host, port, NO_IDENTITY);
    }

    /**
     * Admits a destination for a caller.
     *
     * @param host the normalised destination host
     * @param port the port
     * @param caller who opened the connection
     * @return the verdict
     */
    AdmissionDecision admit(String host, int port, Caller caller) {
        String canonical = HostPattern.canonicalHost(host);
        Entry scopedOut = null;
        for (Entry e : entries) {
            if (e.endpoint().admits(canonical, port)) {
                if (e.policy().admitsCaller(caller)) {
                    return AdmissionDecision.allow(e.facts());
                }
                if (scopedOut == null) {
                    scopedOut = e;
                }
            }
        }
        if (scopedOut == null) {
            return AdmissionDecision.deny(DENIED);
        }
        return AdmissionDecision.deny(binaryDenial(scopedOut.policy().key(), caller));
    }

    /** {@return whether a binary-scoped policy has an endpoint admitting {@code host:port}} */
    boolean scoped(String host, int port) {
        String canonical = HostPattern.canonicalHost(host);
        for (Entry e : entries) {
            if (e.policy().binaryScoped() && e.endpoint().admits(canonical, port)) {
                return true;
            }
        }
        return false;
    }

    /** {@return the reason a binary-scoped policy refuses a caller} Safe: policy key, binary path, identity reason. */
    static String binaryDenial(String policy, Caller caller) {
        String head = "network policy '" + policy + "' allows this host and port only for its listed binaries";
        return switch (caller) {
            case Caller.Identified i -> head + "; " + i.process().binary() + " is not one of them (nor is any of its "
                    + i.process().ancestors().size() + " ancestors)";
            case Caller.Unidentified u -> head + ", and the calling process is not known: " + u.reason();
            case Caller.Unscoped u -> head; // never reached: unscoped callers are admitted
        };
    }

    /**
     * {@return every policy with an endpoint admitting {@code host:port}, in key order, each with whether its
     * {@code binaries} admit the caller (for {@code explain --binary})}
     */
    List<PolicyMatch> matching(String host, int port, Caller caller) {
        String canonical = HostPattern.canonicalHost(host);
        List<PolicyMatch> out = new ArrayList<>();
        for (Entry e : entries) {
            if (e.endpoint().admits(canonical, port)
                    && out.stream().noneMatch(m -> m.policy().key().equals(e.policy().key()))) {
                out.add(new PolicyMatch(e.policy(), e.policy().admitsCaller(caller)));
            }
        }
        return out;
    }

    /** A policy whose endpoint admits a destination, and whether its binaries admit the caller. */
    record PolicyMatch(NetworkPolicy policy, boolean callerAdmitted) {
    }
}
