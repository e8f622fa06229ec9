package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.host.OutboundRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What a post-credentials stage may change, enforced by {@link ChainEngine#runPostCredentials} on every answer
 * (the promise of {@link dev.openshell.middleware.spi.host.RestrictedMiddlewareProvider}; RFC 0009, "Decisions":
 * request signing runs in-process after credential injection and must not re-route or re-frame the request):
 * <ul>
 *   <li>the target (scheme, host, port, method, path, query) and the body are unchanged;</li>
 *   <li>the {@code Host} fields are unchanged (names compared case-insensitively, values exactly), except that a
 *       request without {@code Host} (HTTP/1.0) may gain exactly one naming the target's authority;</li>
 *   <li>no hop-by-hop or framing field ({@link HeaderTable}) is added ({@link #forwardable} dropped every one from
 *       the input, so any in the answer is new);</li>
 *   <li>every field name is a token and every value safe ({@link HeaderRules#isToken}, {@link HeaderRules#isSafeValue}),
 *       at most {@link EnvelopeLimits#MAX_HEADER_LINES} lines and {@link EnvelopeLimits#MAX_HEADER_BYTES} encoded.</li>
 * </ul>
 * Messages name fields, never their values (which may be credentials).
 */
final class PostCredentialsRules {
    private PostCredentialsRules() {
    }

    /** A broken rule. @param category the failure category @param code the platform code @param message safe text */
    record Violation(FailureCategory category, String code, String message) {
    }

    /**
     * {@return {@code headers} without hop-by-hop, framing or Connection-nominated lines, which a post-credentials
     * stage never sees and the proxy rebuilds itself}
     *
     * @param headers the headers about to be forwarded
     */
    static List<HttpHeader> forwardable(List<HttpHeader> headers) {
        Set<String> nominated = HeaderRules.connectionNominated(headers);
        List<HttpHeader> out = null;
        for (int i = 0; i < headers.size(); i++) {
            HttpHeader h = headers.get(i);
            String lower = HeaderRules.asciiLower(h.name());
            boolean drop = HeaderTable.hopByHop(lower) || HeaderTable.framing(lower) || nominated.contains(lower);
            if (drop && out == null) {
                out = new ArrayList<>(headers.subList(0, i));
            } else if (!drop && out != null) {
                out.add(h);
            }
        }
        return out == null ? List.copyOf(headers) : List.copyOf(out);
    }

    /**
     * Checks a stage's answer against its input.
     *
     * @param in what the stage received
     * @param out what it returned, possibly {@code null}
     * @return the first broken rule, or {@code null} when the answer may be forwarded
     */
    static Violation check(OutboundRequest in, OutboundRequest out) {
        if (out == null) {
            return new Violation(FailureCategory.INVALID_RESULT, PlatformCodes.RESULT_MISSING,
                    "stage returned no request");
        }
        if (!out.target().equals(in.target())) {
            return new Violation(FailureCategory.INVALID_RESULT, PlatformCodes.POST_CREDENTIALS_TARGET_CHANGED,
                    "a post-credentials stage changed the request target");
        }
        if (out.body() != in.body() && !out.body().equals(in.body())) {
            return new Violation(FailureCategory.INVALID_RESULT, PlatformCodes.POST_CREDENTIALS_BODY_CHANGED,
                    "a post-credentials stage changed the body");
        }
        List<HttpHeader> headers = out.headers();
        if (headers.size() > EnvelopeLimits.MAX_HEADER_LINES) {
            return new Violation(FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.HEADER_COUNT_OVER_CAPACITY,
                    headers.size() + " header lines exceed " + EnvelopeLimits.MAX_HEADER_LINES);
        }
        if (Wire.headers(headers) > EnvelopeLimits.MAX_HEADER_BYTES) {
            return new Violation(FailureCategory.ENVELOPE_VIOLATION, PlatformCodes.HEADER_BYTES_OVER_CAPACITY,
                    "headers exceed " + EnvelopeLimits.MAX_HEADER_BYTES + " encoded bytes");
        }
        for (HttpHeader h : headers) {
            if (!HeaderRules.isToken(h.name()) || !HeaderRules.isSafeValue(h.value())) {
                return new Violation(FailureCategory.INVALID_RESULT, PlatformCodes.POST_CREDENTIALS_INVALID_HEADER,
                        "a post-credentials stage returned a field that is not a token with a safe value");
            }
            String lower = HeaderRules.asciiLower(h.name());
            if (HeaderTable.hopByHop(lower) || HeaderTable.framing(lower)) {
                return new Violation(FailureCategory.INVALID_RESULT, PlatformCodes.POST_CREDENTIALS_FORBIDDEN_HEADER,
                        "a post-credentials stage added the hop-by-hop or framing field " + lower);
            }
        }
        List<String> before = HttpHeader.valuesOf(in.headers(), "host");
        List<String> after = HttpHeader.valuesOf(headers, "host");
        if (!after.equals(before) && !(before.isEmpty() && after.equals(List.of(authority(in.target()))))) {
            return new Violation(FailureCategory.INVALID_RESULT, PlatformCodes.POST_CREDENTIALS_HOST_CHANGED,
                    "a post-credentials stage changed the Host field");
        }
        return null;
    }

    /** {@return the target's authority as a Host value: IPv6 in brackets, the port unless the scheme's default} */
    static String authority(HttpRequestTarget t) {
        String host = t.host().indexOf(':') >= 0 ? "[" + t.host() + "]" : t.host();
        boolean defaultPort = (t.scheme().equals("https") && t.port() == 443)
                || (t.scheme().equals("http") && t.port() == 80);
        return defaultPort ? host : host + ":" + t.port();
    }
}
