package dev.openshell.builtin.regex;

/**
 * The fixed set of secret formats {@code openshell/regex} finds. The set is part of the built-in's documented
 * behaviour ({@code docs/builtin-regex.md}); it is best-effort, not parser-aware, and never a guarantee that a body
 * is free of secrets (RFC 0009, "Non-goals": "Guaranteeing detection correctness").
 *
 * <p>Each kind has a stable {@link #id()} used in config ({@code patterns}), in finding types
 * ({@code secret.<id>}) and in redaction placeholders ({@code [REDACTED:<id>]}).
 */
public enum SecretKind {
    /** {@code -----BEGIN ... PRIVATE KEY-----} through the matching END line (or the end of the key data). */
    PRIVATE_KEY("private_key", "PEM private key block"),
    /** {@code sk-ant-} followed by at least 20 of {@code [A-Za-z0-9_-]}. */
    ANTHROPIC_API_KEY("anthropic_api_key", "Anthropic API key"),
    /**
     * {@code sk-proj-}, {@code sk-svcacct-} or {@code sk-admin-} followed by at least 20 of {@code [A-Za-z0-9_-]};
     * or {@code sk-} followed by at least 32 letters and digits ending the token.
     */
    OPENAI_API_KEY("openai_api_key", "OpenAI API key"),
    /** {@code AKIA} or {@code ASIA} followed by exactly 16 of {@code [A-Z0-9]}, as a whole token. */
    AWS_ACCESS_KEY_ID("aws_access_key_id", "AWS access key ID"),
    /**
     * {@code ghp_}, {@code gho_}, {@code ghu_}, {@code ghs_} or {@code ghr_} followed by at least 36 letters and
     * digits; or {@code github_pat_} followed by at least 22 of {@code [A-Za-z0-9_]}.
     */
    GITHUB_TOKEN("github_token", "GitHub token"),
    /** {@code xoxa-}, {@code xoxb-}, {@code xoxp-}, {@code xoxo-}, {@code xoxs-} or {@code xoxr-} followed by at
     * least 10 of {@code [A-Za-z0-9-]}. */
    SLACK_TOKEN("slack_token", "Slack token"),
    /** {@code AIza} followed by exactly 35 of {@code [A-Za-z0-9_-]}, as a whole token. */
    GOOGLE_API_KEY("google_api_key", "Google API key");

    private final String id;
    private final String label;

    SecretKind(String id, String label) {
        this.id = id;
        this.label = label;
    }

    /** {@return the stable identifier, for example {@code openai_api_key}} */
    public String id() {
        return id;
    }

    /** {@return the audit-safe display label, for example {@code OpenAI API key}} */
    public String label() {
        return label;
    }

    /** {@return the finding type: {@code secret.<id>}} */
    public String findingType() {
        return "secret." + id;
    }

    /** {@return the text that replaces a match in {@code redact} mode: {@code [REDACTED:<id>]}} */
    public String placeholder() {
        return "[REDACTED:" + id + "]";
    }

    /** {@return the kind with this id, or {@code null}} @param id a candidate id */
    static SecretKind byId(String id) {
        for (SecretKind k : values()) {
            if (k.id.equals(id)) {
                return k;
            }
        }
        return null;
    }
}
