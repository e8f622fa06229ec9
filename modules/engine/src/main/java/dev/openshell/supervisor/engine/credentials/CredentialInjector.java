package dev.openshell.supervisor.engine.credentials;

import dev.openshell.middleware.spi.HttpHeader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Replaces credential placeholders with real values after the middleware chain (RFC 0009: middleware runs before
 * credential injection, so stages only ever see placeholders).
 *
 * <p>Placeholder: {@code openshell:resolve:env:NAME}, where {@code NAME} is a credential declared in the gateway
 * configuration. Recognised in every header value, inside {@code Basic} credentials (base64 of {@code user:pass},
 * decoded, substituted, re-encoded), and in the request target's query (literally or with {@code :} written
 * {@code %3A}; the value is percent-encoded there).
 *
 * <p>Refusals (the request is denied with 403 and the code; messages name credentials, never values):
 * <ul>
 *   <li>{@value #UNKNOWN}: no credential has that name;</li>
 *   <li>{@value #HOST_MISMATCH}: the credential is not bound to the admitted host;</li>
 *   <li>{@value #INVALID}: {@code openshell:resolve:} not followed by {@code env:} and a valid name;</li>
 *   <li>{@value #UNSAFE}: the resolved value holds CR, LF or NUL.</li>
 * </ul>
 */
public final class CredentialInjector {
    /** Platform code: unknown credential. */
    public static final String UNKNOWN = "credential_unknown";
    /** Platform code: the credential may not be sent to this host. */
    public static final String HOST_MISMATCH = "credential_host_not_allowed";
    /** Platform code: malformed placeholder. */
    public static final String INVALID = "credential_placeholder_invalid";
    /** Platform code: unsafe resolved value. */
    public static final String UNSAFE = "credential_value_unsafe";

    static final String MARKER = "openshell:resolve:";
    private static final Pattern PLACEHOLDER = Pattern.compile("openshell:resolve:env:([A-Za-z_][A-Za-z0-9_]{0,127})");
    private static final Pattern ENCODED_MARKER = Pattern.compile("openshell(?:%3[Aa]|:)resolve(?:%3[Aa]|:)env"
            + "(?:%3[Aa]|:)([A-Za-z_][A-Za-z0-9_]{0,127})");
    private static final Pattern ANY_ENCODED_MARKER = Pattern.compile("openshell(?:%3[Aa]|:)resolve(?:%3[Aa]|:)");

    private final Map<String, Credential> byName;

    /** @param credentials the declared credentials; names must be unique */
    public CredentialInjector(List<Credential> credentials) {
        Map<String, Credential> m = new LinkedHashMap<>();
        for (Credential c : credentials) {
            if (m.putIfAbsent(c.name(), c) != null) {
                throw new IllegalArgumentException("credential '" + c.name() + "' is declared twice");
            }
        }
        this.byName = Map.copyOf(m);
    }

    /** {@return an injector with no credentials: any placeholder is refused as unknown} */
    public static CredentialInjector none() {
        return new CredentialInjector(List.of());
    }

    /**
     * Looks up a credential for a host, for the restricted host capability that post-credentials built-ins use.
     *
     * @param name the credential name
     * @param host the admitted host
     * @return the value, or empty when no credential has that name or it is not bound to {@code host}
     */
    public java.util.Optional<dev.openshell.middleware.spi.host.Secret> lookup(String name, String host) {
        Credential c = byName.get(name);
        if (c == null || !c.hosts().test(host.toLowerCase(Locale.ROOT))) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(dev.openshell.middleware.spi.host.Secret.of(c.value().reveal()));
    }

    /** {@return the declared credential names} */
    public Set<String> names() {
        return new TreeSet<>(byName.keySet());
    }

    /** The outcome of {@link #inject}. */
    public sealed interface Result {
        /**
         * Placeholders replaced (or none present).
         *
         * @param headers the headers with real values; never log them
         * @param query the query with real values; never log it
         * @param used the credential names used, for audit
         */
        record Injected(List<HttpHeader> headers, String query, Set<String> used) implements Result {
            /** {@return counts and names only} */
            @Override
            public String toString() {
                return "Injected[" + headers.size() + " headers, used=" + used + "]";
            }
        }

        /**
         * The request must be refused.
         *
         * @param code a platform code ({@value CredentialInjector#UNKNOWN} and so on)
         * @param message a safe message naming the credential, never its value
         */
        record Refused(String code, String message) implements Result {
        }
    }

    /**
     * Replaces every placeholder for {@code host}.
     *
     * @param host the admitted host, lowercase
     * @param headers the request headers after the chain, wire order
     * @param rawQuery the query after the chain, without {@code ?}
     * @return the injected request parts, or a refusal
     */
    public Result inject(String host, List<HttpHeader> headers, String rawQuery) {
        Objects.requireNonNull(host, "host");
        Set<String> used = new TreeSet<>();
        List<HttpHeader> out = new ArrayList<>(headers.size());
        try {
            for (HttpHeader h : headers) {
                out.add(new HttpHeader(h.name(), headerValue(host, h.value(), used)));
            }
            String query = rawQuery.isEmpty() ? rawQuery : query(host, rawQuery, used);
            return new Result.Injected(List.copyOf(out), query, Set.copyOf(used));
        } catch (Refusal r) {
            return new Result.Refused(r.code, r.getMessage());
        }
    }

    private String headerValue(String host, String value, Set<String> used) {
        if (value.regionMatches(true, 0, "Basic ", 0, 6)) {
            String token = value.substring(6).strip();
            try {
                String decoded = new String(Base64.getDecoder().decode(token), StandardCharsets.UTF_8);
                if (decoded.contains(MARKER)) {
                    String replaced = substitute(host, decoded, used);
                    return value.substring(0, 6) + Base64.getEncoder()
                            .encodeToString(replaced.getBytes(StandardCharsets.UTF_8));
                }
            } catch (IllegalArgumentException notBase64) {
                // not base64: fall through to a plain substitution
            }
        }
        return value.contains(MARKER) ? substitute(host, value, used) : value;
    }

    private String query(String host, String q, Set<String> used) {
        if (!ANY_ENCODED_MARKER.matcher(q).find()) {
            return q;
        }
        Matcher m = ENCODED_MARKER.matcher(q);
        StringBuilder b = new StringBuilder(q.length() + 64);
        int last = 0;
        while (m.find()) {
            b.append(q, last, m.start());
            b.append(percentEncode(resolve(host, m.group(1), used)));
            last = m.end();
        }
        b.append(q, last, q.length());
        String result = b.toString();
        if (ANY_ENCODED_MARKER.matcher(result).find()) {
            throw new Refusal(INVALID, "malformed credential placeholder in the query (expected "
                    + "openshell:resolve:env:NAME)");
        }
        return result;
    }

    private String substitute(String host, String value, Set<String> used) {
        if (PLACEHOLDER.matcher(value).replaceAll("").contains(MARKER)) {
            throw new Refusal(INVALID, "malformed credential placeholder in a header (expected "
                    + "openshell:resolve:env:NAME)");
        }
        Matcher m = PLACEHOLDER.matcher(value);
        StringBuilder b = new StringBuilder(value.length() + 64);
        int last = 0;
        while (m.find()) {
            b.append(value, last, m.start()).append(resolve(host, m.group(1), used));
            last = m.end();
        }
        return b.append(value, last, value.length()).toString();
    }

    private String resolve(String host, String name, Set<String> used) {
        Credential c = byName.get(name);
        if (c == null) {
            throw new Refusal(UNKNOWN, "credential '" + name + "' is not declared in the gateway configuration");
        }
        if (!c.hosts().test(host.toLowerCase(Locale.ROOT))) {
            throw new Refusal(HOST_MISMATCH, "credential '" + name + "' may not be sent to this host (bound to "
                    + c.hostsDescription() + ")");
        }
        String v = c.value().reveal();
        if (v.indexOf('\r') >= 0 || v.indexOf('\n') >= 0 || v.indexOf('\0') >= 0) {
            throw new Refusal(UNSAFE, "credential '" + name + "' resolves to a value with CR, LF or NUL");
        }
        used.add(name);
        return v;
    }

    /** RFC 3986 percent-encoding of UTF-8 bytes, unreserved characters kept. */
    static String percentEncode(String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        StringBuilder b = new StringBuilder(bytes.length * 3);
        for (byte x : bytes) {
            int c = x & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                b.append((char) c);
            } else {
                b.append('%').append("0123456789ABCDEF".charAt(c >> 4)).append("0123456789ABCDEF".charAt(c & 0xf));
            }
        }
        return b.toString();
    }

    /** Internal control flow for a refusal; never escapes {@link #inject}. */
    private static final class Refusal extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String code;

        Refusal(String code, String message) {
            super(message, null, false, false);
            this.code = code;
        }
    }
}
