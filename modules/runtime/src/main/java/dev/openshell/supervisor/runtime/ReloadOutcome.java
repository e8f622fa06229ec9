package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.policy.ConfigProblem;
import java.util.List;
import java.util.Objects;

/**
 * What one reload attempt did (RFC 0009, "Registration and delivery": "Policy and middleware registry swap as one
 * generation only after the complete candidate is ready ... If preparation fails, the supervisor preserves the
 * complete last-known-good runtime and continues retrying").
 */
public sealed interface ReloadOutcome {
    /** {@return the number of the generation serving after the attempt} */
    long serving();

    /**
     * A new generation was prepared and swapped in.
     *
     * @param serving the new generation's number
     * @param replaced the number of the generation it replaced
     * @param summary the new generation's {@link Generation#summary()}
     */
    record Installed(long serving, long replaced, String summary) implements ReloadOutcome {
        /** @throws NullPointerException if {@code summary} is {@code null} */
        public Installed {
            Objects.requireNonNull(summary, "summary");
        }
    }

    /**
     * Nothing to swap: the policy file's content is the one already installed, or it parses to the same policy.
     *
     * @param serving the generation that keeps serving
     */
    record Unchanged(long serving) implements ReloadOutcome {
    }

    /**
     * Preparation failed; the last-known-good generation keeps serving, and the attempt is retried.
     *
     * @param serving the last-known-good generation's number
     * @param reason one safe line: the first error, or why preparation stopped
     * @param problems every problem of the policy file with file, line and column; empty when the failure is not
     *     in the file (a credential that cannot be read, for example)
     */
    record Failed(long serving, String reason, List<ConfigProblem> problems) implements ReloadOutcome {
        /** @throws NullPointerException if a part is {@code null} */
        public Failed {
            Objects.requireNonNull(reason, "reason");
            problems = List.copyOf(problems);
        }
    }
}
