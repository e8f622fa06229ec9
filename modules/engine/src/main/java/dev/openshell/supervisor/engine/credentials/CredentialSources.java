package dev.openshell.supervisor.engine.credentials;

import dev.openshell.middleware.spi.host.Secret;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;

/**
 * Resolves a credential {@code source} from the gateway configuration: {@code env:NAME} (the supervisor's own
 * environment) or {@code file:/absolute/path} (the file's content, without one trailing newline; at most 64 KiB).
 */
public final class CredentialSources {
    /** Largest credential file, in bytes. */
    public static final int MAX_FILE_BYTES = 64 * 1024;
    private final Map<String, String> environment;

    /** @param environment the environment to read {@code env:} sources from */
    public CredentialSources(Map<String, String> environment) {
        this.environment = Map.copyOf(Objects.requireNonNull(environment, "environment"));
    }

    /** {@return sources backed by this process's environment} */
    public static CredentialSources system() {
        return new CredentialSources(System.getenv());
    }

    /**
     * Resolves one source.
     *
     * @param credentialName the credential's name, for messages
     * @param source {@code env:NAME} or {@code file:/path}
     * @return the value
     * @throws IllegalArgumentException with a message naming the credential and the source (never the value) when
     *     the source is malformed, missing, unreadable, too large, empty, or holds CR, LF or NUL inside
     */
    public Secret resolve(String credentialName, String source) {
        String value;
        if (source.startsWith("env:")) {
            String var = source.substring(4);
            value = environment.get(var);
            if (value == null) {
                throw new IllegalArgumentException("credential '%s': environment variable %s is not set"
                        .formatted(credentialName, var));
            }
        } else if (source.startsWith("file:")) {
            Path file = Path.of(source.substring(5));
            try {
                if (!file.isAbsolute()) {
                    throw new IllegalArgumentException("credential '%s': file source must be an absolute path"
                            .formatted(credentialName));
                }
                if (Files.size(file) > MAX_FILE_BYTES) {
                    throw new IllegalArgumentException("credential '%s': file %s is larger than %d bytes"
                            .formatted(credentialName, file, MAX_FILE_BYTES));
                }
                value = Files.readString(file, StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new IllegalArgumentException("credential '%s': cannot read %s (%s)"
                        .formatted(credentialName, file, e.getClass().getSimpleName()), e);
            }
            if (value.endsWith("\r\n")) {
                value = value.substring(0, value.length() - 2);
            } else if (value.endsWith("\n")) {
                value = value.substring(0, value.length() - 1);
            }
        } else {
            throw new IllegalArgumentException(("credential '%s': source must be env:NAME or file:/path "
                    + "(got a value starting with '%s')").formatted(credentialName,
                    source.length() > 5 ? source.substring(0, 5) : source));
        }
        if (value.isEmpty()) {
            throw new IllegalArgumentException("credential '%s': the source is empty".formatted(credentialName));
        }
        if (value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0 || value.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("credential '%s': the value contains CR, LF or NUL"
                    .formatted(credentialName));
        }
        return Secret.of(value);
    }
}
