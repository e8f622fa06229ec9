package dev.openshell.middleware.spi.internal;

import static org.apiguardian.api.API.Status.INTERNAL;

import org.apiguardian.api.API;

/**
 * The safe form of a name the agent chose (a JSON-RPC method, an MCP tool name, a GraphQL operation or root field
 * name) as an L7 decision's reason, rule and detail carry it into the audit log ({@code docs/observability.md},
 * "Agent-controlled names"): at most {@value #MAX_CHARS} characters (longer ones cut, then {@code ...}), every
 * character outside printable ASCII ({@code U+0021..U+007E}) as {@code ?}, and every run of at least
 * {@value #MIN_TOKEN} ASCII letters and digits that holds both a letter and a digit (the shape of an access key, an
 * API key or a token: {@code AKIA...}, the tail of {@code sk-proj-...} or {@code ghp_...}) as {@code [redacted]}.
 * Names as methods and tools are written ({@code tools/call}, {@code github.create_issue}, {@code getUser2}) are
 * unchanged. Rules are matched against the names as sent; only what is written is this form. The one home of the
 * rule: the L7 engine's reasons and rules and the audit module's {@code http_request.http_method} both use it.
 */
@API(status = INTERNAL, since = "0.2")
public final class AuditNames {
    /** The most characters of a name written. */
    public static final int MAX_CHARS = 64;
    /** The shortest run of letters and digits redacted. */
    public static final int MIN_TOKEN = 16;

    private AuditNames() {
    }

    /** {@return {@code name} in its safe form} */
    public static String safe(String name) {
        StringBuilder b = new StringBuilder(Math.min(name.length(), MAX_CHARS + 16));
        int i = 0;
        while (i < name.length() && b.length() < MAX_CHARS) {
            int run = i;
            boolean letter = false;
            boolean digit = false;
            while (run < name.length() && isAlnum(name.charAt(run))) {
                letter |= Character.isLetter(name.charAt(run));
                digit |= Character.isDigit(name.charAt(run));
                run++;
            }
            if (run - i >= MIN_TOKEN && letter && digit) {
                b.append("[redacted]");
                i = run;
            } else if (run > i) {
                int end = Math.min(run, i + MAX_CHARS - b.length());
                b.append(name, i, end);
                i = end;
            } else {
                char c = name.charAt(i++);
                b.append(c >= 0x21 && c <= 0x7E ? c : '?');
            }
        }
        if (i < name.length()) {
            b.append("...");
        }
        return b.toString();
    }

    private static boolean isAlnum(char c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9';
    }
}
