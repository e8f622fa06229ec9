package dev.openshell.supervisor.engine.credentials;

import dev.openshell.middleware.spi.internal.Syntax;
import dev.openshell.middleware.spi.HeaderTable;
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
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Replaces credential placeholders with real values after the middleware chain (RFC 0009: middleware runs before
 * credential injection, so stages only ever see placeholders), where each credential's {@link Credential.Placement}
 * allows it.
 *
 * <p>Placeholder: {@code openshell:resolve:env:NAME}, where {@code NAME} is a credential declared in the gateway
 * configuration. Recognised in request header values (any ordinary header unless the credential lists
 * {@code headers}; never {@code Proxy-*}, hop-by-hop or Connection-nominated fields; {@code Cookie} only when listed),
 * inside {@code Authorization: Basic} credentials (base64 of {@code user:pass}, decoded, substituted, re-encoded;
 * only the parts the credential lists in {@code basic}), and in the values of the query parameters the credential
 * lists in {@code query_params} (literally or with {@code :} written {@code %3A}; the value is percent-encoded there).
 * A credential goes only over {@code https} unless {@code allow_plaintext}, and only to its {@code ports} if listed.
 *
 * <p>Refusals (the request is denied with 403 and the code). The client-facing {@link Result.Refused#message()} is
 * fixed per code and names neither the credential nor its hosts; {@link Result.Refused#detail()} names the
 * credential, its host patterns and the placement, for the operator's audit event, never the value:
 * <ul>
 *   <li>{@value #UNKNOWN}: no credential has that name;</li>
 *   <li>{@value #HOST_MISMATCH}: the credential is not bound to the admitted host;</li>
 *   <li>{@value #PLAINTEXT}: the request goes over plain {@code http} and the credential does not allow it;</li>
 *   <li>{@value #PORT}: the destination port is not among the credential's {@code ports};</li>
 *   <li>{@value #MISPLACED}: the placeholder is somewhere the credential's placements do not allow;</li>
 *   <li>{@value #INVALID}: {@code openshell:resolve:} not followed by {@code env:} and a valid name;</li>
 *   <li>{@value #UNSAFE}: the resolved value holds CR, LF or NUL.</li>
 * </ul>
 */
public final class CredentialInjector {
    /** Platform code: unknown credential. */
    public static final String UNKNOWN = "credential_unknown";
    /** Platform code: the credential may not be sent to this host. */
    public static final String HOST_MISMATCH = "credential_host_not_allowed";
    /** Platform code: the credential may not be sent over plain http. */
    public static final String PLAINTEXT = "credential_plaintext_not_allowed";
    /** Platform code: the credential may not be sent to this port. */
    public static final String PORT = "credential_port_not_allowed";
    /** Platform code: the placeholder is where the credential may not go. */
    public static final String MISPLACED = "credential_placement_not_allowed";
    /** Platform code: malformed placeholder. */
    public static final String INVALID = "credential_placeholder_invalid";
    /** Platform code: unsafe resolved value. */
    public static final String UNSAFE = "credential_value_unsafe";

    /** The client-facing message of each code: fixed, naming no credential and no host. */
    private static final Map<String, String> CLIENT_MESSAGES = Map.of(
            UNKNOWN, "a credential placeholder cannot be resolved",
            HOST_MISMATCH, "a credential placeholder cannot be resolved for this destination",
            PLAINTEXT, "a credential placeholder may not be sent over plain http",
            PORT, "a credential placeholder may not be sent to this port",
            MISPLACED, "a credential placeholder is in a place the credential may not go",
            INVALID, "malformed credential placeholder (expected openshell:resolve:env:NAME)",
            UNSAFE, "a credential placeholder cannot be resolved safely");

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

    /**
     * {@return the declared credential named {@code name}} Its value is secret: never log it.
     *
     * @param name the credential name
     */
    public java.util.Optional<Credential> declared(String name) {
        return java.util.Optional.ofNullable(byName.get(name));
    }

    /**
     * {@return the names of the credentials bound to {@code host}, sorted} Whatever the scheme, port or placement
     * rules: the response from such a host is scrubbed of every one of them, placed in the request or not (a
     * stateful upstream can hand back a value it stored earlier; docs/credentials.md section 4).
     *
     * @param host the admitted host
     */
    public Set<String> boundTo(String host) {
        String lower = host.toLowerCase(Locale.ROOT);
        Set<String> out = new TreeSet<>();
        for (Credential c : byName.values()) {
            if (c.hosts().test(lower)) {
                out.add(c.name());
            }
        }
        return out;
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
         * @param message the fixed client-facing message of the code: names no credential and no host
         * @param detail the operator-facing explanation (audit): may name the credential, its host patterns and the
         *     placement, never the value
         */
        record Refused(String code, String message, String detail) implements Result {
        }
    }

    /**
     * Where one request goes.
     *
     * @param scheme {@code http} or {@code https}: how the request travels to the upstream
     * @param host the admitted host, lowercase
     * @param port the destination port
     */
    public record Destination(String scheme, String host, int port) {
        /** Checks the parts. */
        public Destination {
            Objects.requireNonNull(scheme, "scheme");
            Objects.requireNonNull(host, "host");
        }
    }

    /**
     * Replaces every placeholder for an https request to port 443 with no Connection-nominated fields.
     *
     * @param host the admitted host, lowercase
     * @param headers the request headers
     * @param rawQuery the raw query
     * @return the injected request parts, or a refusal
     */
    public Result inject(String host, List<HttpHeader> headers, String rawQuery) {
        return inject(new Destination("https", host, 443), headers, Set.of(), rawQuery);
    }

    /**
     * Replaces every placeholder for a destination.
     *
     * @param to where the request goes
     * @param headers the request headers after the chain, wire order
     * @param nominated the lowercase field names the request's {@code Connection} fields nominate
     * @param rawQuery the query after the chain, without {@code ?}
     * @return the injected request parts, or a refusal
     */
    public Result inject(Destination to, List<HttpHeader> headers, Set<String> nominated, String rawQuery) {
        Objects.requireNonNull(to, "to");
        Set<String> used = new TreeSet<>();
        List<HttpHeader> out = new ArrayList<>(headers.size());
        try {
            for (HttpHeader h : headers) {
                String lower = h.name().toLowerCase(Locale.ROOT);
                out.add(new HttpHeader(h.name(), headerValue(to, lower, nominated.contains(lower), h.value(), used)));
            }
            String query = rawQuery.isEmpty() ? rawQuery : query(to, rawQuery, used);
            return new Result.Injected(List.copyOf(out), query, Set.copyOf(used));
        } catch (Refusal r) {
            return new Result.Refused(r.code, CLIENT_MESSAGES.get(r.code), r.getMessage());
        }
    }

    private String headerValue(Destination to, String name, boolean nominated, String value, Set<String> used) {
        boolean forbidden = name.startsWith("proxy-") || HeaderTable.hopByHop(name) || nominated;
        if (value.regionMatches(true, 0, "Basic ", 0, 6) && name.equals("authorization")) {
            String token = value.substring(6).strip();
            try {
                String decoded = new String(Base64.getDecoder().decode(token), StandardCharsets.UTF_8);
                if (decoded.contains(MARKER)) {
                    String replaced = basic(to, decoded, used);
                    return value.substring(0, 6) + Base64.getEncoder()
                            .encodeToString(replaced.getBytes(StandardCharsets.UTF_8));
                }
            } catch (IllegalArgumentException notBase64) {
                // not base64: fall through to a plain substitution
            }
        }
        if (!value.contains(MARKER)) {
            return value;
        }
        return substitute(to, value, used, "header " + name, c -> !forbidden && (c.placement().headers().isEmpty()
                ? !name.equals("cookie") : c.placement().headers().contains(name)));
    }

    /** Basic credentials: a placeholder before the first colon outside every placeholder is in the user part. */
    private String basic(Destination to, String decoded, Set<String> used) {
        int colon = -1;
        Matcher m = PLACEHOLDER.matcher(decoded);
        int from = 0;
        while (colon < 0) {
            boolean found = m.find(from);
            int limit = found ? m.start() : decoded.length();
            int c = decoded.indexOf(':', from);
            if (c >= 0 && c < limit) {
                colon = c;
            } else if (!found) {
                break;
            } else {
                from = m.end();
            }
        }
        int split = colon < 0 ? decoded.length() : colon;
        String user = substitute(to, decoded.substring(0, split), used, "Basic user",
                c -> c.placement().basicUser());
        String password = colon < 0 ? "" : substitute(to, decoded.substring(split + 1), used, "Basic password",
                c -> c.placement().basicPassword());
        return colon < 0 ? user : user + ":" + password;
    }

    private String query(Destination to, String q, Set<String> used) {
        if (!ANY_ENCODED_MARKER.matcher(q).find()) {
            return q;
        }
        StringBuilder b = new StringBuilder(q.length() + 64);
        int start = 0;
        while (start <= q.length()) {
            int amp = q.indexOf('&', start);
            int end = amp < 0 ? q.length() : amp;
            String param = q.substring(start, end);
            int eq = param.indexOf('=');
            String name = eq < 0 ? param : param.substring(0, eq);
            if (ANY_ENCODED_MARKER.matcher(name).find()) {
                throw new Refusal(MISPLACED, "credential placeholder in a query parameter name (the query is opt-in"
                        + " per parameter name with query_params)");
            }
            b.append(name);
            if (eq >= 0) {
                b.append('=').append(queryValue(to, name, param.substring(eq + 1), used));
            }
            if (amp < 0) {
                break;
            }
            b.append('&');
            start = amp + 1;
        }
        return b.toString();
    }

    private String queryValue(Destination to, String param, String value, Set<String> used) {
        Matcher m = ENCODED_MARKER.matcher(value);
        StringBuilder b = new StringBuilder(value.length() + 64);
        int last = 0;
        while (m.find()) {
            b.append(value, last, m.start());
            b.append(percentEncode(resolve(to, m.group(1), used, "query parameter " + param,
                    c -> c.placement().queryParams().contains(param))));
            last = m.end();
        }
        b.append(value, last, value.length());
        String result = b.toString();
        if (ANY_ENCODED_MARKER.matcher(result).find()) {
            throw new Refusal(INVALID, "malformed credential placeholder in query parameter " + param);
        }
        return result;
    }

    private String substitute(Destination to, String value, Set<String> used, String where,
                              Predicate<Credential> allowed) {
        if (PLACEHOLDER.matcher(value).replaceAll("").contains(MARKER)) {
            throw new Refusal(INVALID, "malformed credential placeholder in " + where);
        }
        Matcher m = PLACEHOLDER.matcher(value);
        StringBuilder b = new StringBuilder(value.length() + 64);
        int last = 0;
        while (m.find()) {
            b.append(value, last, m.start()).append(resolve(to, m.group(1), used, where, allowed));
            last = m.end();
        }
        return b.append(value, last, value.length()).toString();
    }

    private String resolve(Destination to, String name, Set<String> used, String where,
                           Predicate<Credential> allowed) {
        Credential c = byName.get(name);
        if (c == null) {
            throw new Refusal(UNKNOWN, "credential '" + name + "' is not declared in the gateway configuration");
        }
        String bound = "credential '" + name + "' (bound to " + c.hostsDescription() + ")";
        if (!c.hosts().test(to.host().toLowerCase(Locale.ROOT))) {
            throw new Refusal(HOST_MISMATCH, bound + " may not be sent to " + to.host());
        }
        if (!to.scheme().equals("https") && !c.placement().allowPlaintext()) {
            throw new Refusal(PLAINTEXT, bound + " may not be sent over plain http (allow_plaintext is false)");
        }
        if (!c.placement().ports().isEmpty() && !c.placement().ports().contains(to.port())) {
            throw new Refusal(PORT, bound + " may not be sent to port " + to.port() + " (ports "
                    + new TreeSet<>(c.placement().ports()) + ")");
        }
        if (!allowed.test(c)) {
            throw new Refusal(MISPLACED, bound + " may not be placed in the " + where);
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
        return Syntax.percentEncode(s.getBytes(StandardCharsets.UTF_8), true, "");
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
