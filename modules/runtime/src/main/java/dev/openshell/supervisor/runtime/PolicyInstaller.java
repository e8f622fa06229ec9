package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.audit.ConfigChange;
import dev.openshell.supervisor.audit.AuditSink;
import dev.openshell.supervisor.audit.OcsfEvents;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.credentials.CredentialSources;
import dev.openshell.supervisor.policy.ConfigProblem;
import dev.openshell.supervisor.policy.Loaded;
import dev.openshell.supervisor.policy.NetworkEndpoint;
import dev.openshell.supervisor.policy.NetworkPolicy;
import dev.openshell.supervisor.policy.PolicyException;
import dev.openshell.supervisor.policy.SandboxPolicy;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Installs the supervisor's policy generations: the first at start-up, then each reload's candidate, prepared off to
 * the side and swapped in whole, or refused with every problem while the serving generation keeps serving. Says once
 * when a failed policy file is valid again, and warns once when the gateway configuration changed on disk (it is
 * read only at start-up). Reload attempts run one at a time on the {@link Reloader}'s thread; so does every field
 * below that is not final.
 */
final class PolicyInstaller {
    private static final System.Logger LOG = System.getLogger(Supervisor.class.getName());

    private final Supervisor.Options options;
    private final ConnectedRegistry registry;
    private final CredentialSources sources;
    private final ChainEngine engine;
    private final AuditSink audit;
    private final OcsfEvents events;
    private final AtomicReference<Generation> current;
    private final String policyName;
    private final byte[] gatewayDigest;
    private byte[] installedDigest;
    private byte[] failedDigest;
    private String failedReason;
    private byte[] warnedGatewayDigest;

    PolicyInstaller(Supervisor.Options options, ConnectedRegistry registry, CredentialSources sources,
                    ChainEngine engine, AuditSink audit, OcsfEvents events, AtomicReference<Generation> current,
                    String policyName) {
        this.options = options;
        this.registry = registry;
        this.sources = sources;
        this.engine = engine;
        this.audit = audit;
        this.events = events;
        this.current = current;
        this.policyName = policyName;
        this.gatewayDigest = options.gateway().map(PolicyInstaller::digestOf).orElse(null);
    }

    /** The policy of a candidate and the generation prepared from it. */
    private record Candidate(Loaded<SandboxPolicy> policy, Generation generation) {
    }

    /**
     * Prepares a candidate generation off to the side: the policy validated against the connected registry, then
     * compiled, with credentials resolved.
     *
     * @throws PolicyException with every problem of the policy file
     * @throws IllegalArgumentException with a safe message when a credential cannot be resolved or a config cannot
     *     be compiled
     */
    private Candidate prepare() {
        Loaded<SandboxPolicy> policy = Supervisor.loadPolicy(options.policy(), registry.catalog());
        Generation g = Generation.prepare(policy.value(), registry.gateway(), registry.registry(), sources, engine);
        return new Candidate(policy, g);
    }

    /**
     * Logs, and records as a config event, every endpoint that opts in to uninspected upgrades
     * ({@code upgrades: allow_uninspected}): the operator's explicit exception to RFC 0009's rule that traffic that
     * becomes uninspectable under a {@code fail_closed} chain is denied.
     */
    private void announceUninspectedUpgrades(SandboxPolicy policy) {
        for (NetworkPolicy p : policy.networkPolicies().valuesView()) {
            for (int i = 0; i < p.endpoints().size(); i++) {
                NetworkEndpoint e = p.endpoints().get(i);
                if (e.upgradesOptedIn()) {
                    String where = "network_policies." + p.key() + ".endpoints[" + i + "]";
                    LOG.log(System.Logger.Level.WARNING, "{0}: upgrades: allow_uninspected: the bytes after a protocol"
                            + " upgrade (WebSocket) to this endpoint are relayed without middleware inspection, also"
                            + " under fail_closed middleware", where);
                    SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.UNINSPECTED_UPGRADES, true, where,
                            "upgrades: allow_uninspected"));
                }
            }
        }
    }

    /** Installs the first generation: its warnings logged, start-up and validation events written. */
    void installFirst() {
        byte[] digest = options.policy().map(PolicyInstaller::digestOf).orElse(null);
        Candidate c = prepare();
        c.policy().warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe()));
        SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.POLICY_VALIDATION, true, policyName,
                c.policy().value().networkMiddlewares().size() + " middleware configs"));
        announceUninspectedUpgrades(c.policy().value());
        current.set(c.generation());
        installedDigest = digest;
        SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.SUPERVISOR_START, true, policyName,
                c.generation().summary()));
        LOG.log(System.Logger.Level.INFO, "starting with {0}: {1}", policyName, c.generation().summary());
    }

    /** One reload attempt, on the reload thread. */
    ReloadOutcome attemptReload(boolean force) {
        Generation serving = current.get();
        warnIfGatewayChanged();
        byte[] digest = options.policy().map(PolicyInstaller::digestOf).orElse(null);
        if (!force && Arrays.equals(digest, installedDigest)) {
            if (failedReason != null) {
                restored(serving, "the policy file is back to the policy generation " + serving.number()
                        + " serves");
            }
            return new ReloadOutcome.Unchanged(serving.number());
        }
        Candidate c;
        try {
            c = prepare();
        } catch (PolicyException e) {
            List<ConfigProblem> problems = e.problems().castToList();
            String reason = e.errors().size() + " error(s) in " + e.file() + "; first: "
                    + e.errors().getFirst().describe();
            return failed(serving, force, digest, reason, problems);
        } catch (RuntimeException e) {
            String reason = e instanceof IllegalArgumentException && e.getMessage() != null ? e.getMessage()
                    : "preparation failed (" + e.getClass().getSimpleName() + ")";
            if (!(e instanceof IllegalArgumentException)) {
                LOG.log(System.Logger.Level.ERROR, "policy reload failed unexpectedly", e);
            }
            return failed(serving, force, digest, reason, List.of());
        }
        boolean recovering = failedReason != null;
        failedDigest = null;
        failedReason = null;
        if (!force && c.policy().value().equals(serving.policy())) {
            installedDigest = digest;
            if (recovering) {
                restored(serving, "the policy file enforces the policy generation " + serving.number()
                        + " serves");
            }
            LOG.log(System.Logger.Level.DEBUG, "policy file {0} changed but enforces the same policy", policyName);
            return new ReloadOutcome.Unchanged(serving.number());
        }
        c.policy().warnings().forEach(w -> LOG.log(System.Logger.Level.WARNING, w.describe()));
        SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.POLICY_VALIDATION, true, policyName,
                c.policy().value().networkMiddlewares().size() + " middleware configs"));
        announceUninspectedUpgrades(c.policy().value());
        current.set(c.generation());
        installedDigest = digest;
        String summary = c.generation().summary();
        SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.REGISTRY_RELOAD, true, policyName, summary
                + (recovering ? "; valid again after a failed reload" : "")));
        LOG.log(System.Logger.Level.INFO, "policy reloaded from {0}: {1} replaces generation {2}{3}", policyName,
                summary, serving.number(), recovering ? " (a valid policy again after a failed reload)" : "");
        return new ReloadOutcome.Installed(c.generation().number(), serving.number(), summary);
    }

    /** A reload after a failed one found a valid policy that is already serving: says so once. */
    private void restored(Generation serving, String how) {
        failedDigest = null;
        failedReason = null;
        LOG.log(System.Logger.Level.INFO, "policy reload: {0} is valid again; {1}, which keeps serving", policyName,
                how);
        SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.REGISTRY_RELOAD, true, policyName,
                "valid again after a failed reload; generation " + serving.number() + " keeps serving"));
    }

    private ReloadOutcome failed(Generation serving, boolean force, byte[] digest, String reason,
                                 List<ConfigProblem> problems) {
        boolean repeat = !force && Arrays.equals(digest, failedDigest) && reason.equals(failedReason);
        failedDigest = digest;
        failedReason = reason;
        if (repeat) {
            LOG.log(System.Logger.Level.DEBUG, "policy reload retry failed again; generation {0} keeps serving",
                    serving.number());
        } else {
            long errors = problems.stream().filter(ConfigProblem::isError).count();
            StringBuilder b = new StringBuilder("policy reload failed; generation ").append(serving.number())
                    .append(" keeps serving: ").append(problems.isEmpty() ? reason
                            : errors + " error(s) in " + policyName);
            for (ConfigProblem p : problems) {
                b.append(System.lineSeparator()).append("  ").append(p.describe());
                p.untrustedDetail().ifPresent(d -> b.append(System.lineSeparator()).append("      ")
                        .append(Supervisor.UNTRUSTED_LABEL).append(d));
            }
            LOG.log(System.Logger.Level.WARNING, b.toString());
            if (!problems.isEmpty()) {
                SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.POLICY_VALIDATION, false, policyName,
                        problems.stream().filter(ConfigProblem::isError).count() + " errors"));
            }
            SupervisorParts.emitWritten(audit, events.configChange(ConfigChange.REGISTRY_RELOAD, false, policyName,
                    reason + "; generation " + serving.number() + " keeps serving"));
        }
        return new ReloadOutcome.Failed(serving.number(), reason, problems);
    }

    private void warnIfGatewayChanged() {
        if (gatewayDigest == null) {
            return;
        }
        byte[] now = digestOf(options.gateway().orElseThrow());
        if (!Arrays.equals(now, gatewayDigest) && !Arrays.equals(now, warnedGatewayDigest)) {
            warnedGatewayDigest = now;
            LOG.log(System.Logger.Level.WARNING, "the gateway configuration {0} changed on disk; it is read only at "
                    + "start-up (middleware registration is not hot-reloaded): restart the supervisor to apply it",
                    options.gateway().orElseThrow());
        }
    }

    /** {@return the SHA-256 of a file's bytes, or {@code null} when it cannot be read} */
    private static byte[] digestOf(Path file) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file));
        } catch (IOException e) {
            return null;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from the runtime", e);
        }
    }
}
