package dev.openshell.supervisor.policy.gateway;

import dev.openshell.supervisor.policy.internal.Texts;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where the supervisor reads a credential's secret from: {@code env:NAME} or {@code file:/path}. The configuration
 * names the source only; the secret itself never appears in the file or in this model.
 */
public sealed interface CredentialSource {
    /**
     * An environment variable of the supervisor process.
     *
     * @param variable the variable name, {@code [A-Za-z_][A-Za-z0-9_]*}
     */
    record Environment(String variable) implements CredentialSource {
        /**
         * Checks the components.
         *
         * @throws IllegalArgumentException if the name is not a portable variable name
         */
        public Environment {
            Objects.requireNonNull(variable, "variable");
            if (!VARIABLE.matcher(variable).matches()) {
                throw new IllegalArgumentException("environment variable names are letters, digits and '_',"
                        + " not starting with a digit");
            }
        }

        @Override
        public String toString() {
            return "env:" + variable;
        }
    }

    /**
     * A file whose content (trailing line break removed) is the secret.
     *
     * @param path the file, absolute once loaded (relative paths resolve against the configuration's directory)
     */
    record SecretFile(Path path) implements CredentialSource {
        /**
         * Checks the components.
         *
         * @throws NullPointerException if {@code path} is {@code null}
         */
        public SecretFile {
            Objects.requireNonNull(path, "path");
        }

        @Override
        public String toString() {
            return "file:" + path;
        }
    }

    /** Portable environment variable names. */
    Pattern VARIABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");

    /**
     * Parses {@code env:NAME} or {@code file:PATH}.
     *
     * @param text the source as written
     * @param baseDirectory the directory relative file paths resolve against
     * @return the source
     * @throws IllegalArgumentException with the message {@code invalid credential source '<text>': <reason>}
     */
    static CredentialSource parse(String text, Path baseDirectory) {
        if (text.startsWith("env:")) {
            String name = text.substring(4);
            if (!VARIABLE.matcher(name).matches()) {
                throw new IllegalArgumentException("invalid credential source " + Texts.quote(text)
                        + ": environment variable names are letters, digits and '_', not starting with a digit");
            }
            return new Environment(name);
        }
        if (text.startsWith("file:") && text.length() > 5) {
            try {
                return new SecretFile(baseDirectory.resolve(text.substring(5)).normalize());
            } catch (InvalidPathException e) {
                throw new IllegalArgumentException("invalid credential source " + Texts.quote(text)
                        + ": the path is not valid");
            }
        }
        throw new IllegalArgumentException("invalid credential source " + Texts.quote(text)
                + ": write env:VARIABLE or file:/path/to/secret");
    }
}
