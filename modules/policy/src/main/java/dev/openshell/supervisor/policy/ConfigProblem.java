package dev.openshell.supervisor.policy;

import java.util.Objects;
import java.util.Optional;

/**
 * One error or warning found while loading a sandbox policy or a gateway configuration.
 *
 * <p>The message is platform-owned text that names the offending value only where that is safe (host patterns,
 * binding IDs, enum values, numbers; never the contents of a middleware {@code config} or anything that may be a
 * secret), with control characters escaped. Text that came from outside the supervisor, such as the reason an
 * external service's {@code ValidateConfig} gave, is kept apart in {@link #untrustedDetail()} (RFC 0009, "Audit and
 * logging": operator-run text is untrusted input): a command-line tool may show it to the operator, audit events
 * must not carry it.
 *
 * @param severity whether the problem rejects the file
 * @param location file, line and column of the key (or of the enclosing mapping when a key is missing)
 * @param keyPath the config key, dotted, with list indexes in brackets, for example
 *     {@code network_middlewares.redact.endpoints.include[2]}; empty for the whole file
 * @param message what is wrong and, where it helps, how to fix it
 * @param untrustedDetail text from a plugin or external service, sanitised; empty for platform problems
 */
public record ConfigProblem(Severity severity, SourceLocation location, String keyPath, String message,
                            Optional<String> untrustedDetail) {
    /** Whether a problem rejects the file. */
    public enum Severity {
        /** The file is rejected. */
        ERROR,
        /** The file loads; the operator should know. */
        WARNING
    }

    /**
     * Checks the components.
     *
     * @throws NullPointerException if any component is {@code null}
     */
    public ConfigProblem {
        Objects.requireNonNull(severity, "severity");
        Objects.requireNonNull(location, "location");
        Objects.requireNonNull(keyPath, "keyPath");
        Objects.requireNonNull(message, "message");
        Objects.requireNonNull(untrustedDetail, "untrustedDetail");
    }

    /**
     * {@return an error}
     *
     * @param location where
     * @param keyPath the config key
     * @param message what is wrong
     */
    public static ConfigProblem error(SourceLocation location, String keyPath, String message) {
        return new ConfigProblem(Severity.ERROR, location, keyPath, message, Optional.empty());
    }

    /**
     * {@return a warning}
     *
     * @param location where
     * @param keyPath the config key
     * @param message what the operator should know
     */
    public static ConfigProblem warning(SourceLocation location, String keyPath, String message) {
        return new ConfigProblem(Severity.WARNING, location, keyPath, message, Optional.empty());
    }

    /** {@return whether this problem rejects the file} */
    public boolean isError() {
        return severity == Severity.ERROR;
    }

    /**
     * {@return one line for an operator: {@code file:line:column: error: key.path: message}}; the untrusted detail is
     * not included
     */
    public String describe() {
        return location + ": " + (isError() ? "error" : "warning") + ": "
                + (keyPath.isEmpty() ? "" : keyPath + ": ") + message;
    }

    /** {@return {@link #describe()}} */
    @Override
    public String toString() {
        return describe();
    }
}
