package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.internal.Syntax;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.LongAdder;

/**
 * The one place every header rule of RFC 0009 lives, for in-process and external stages alike (in the spirit of
 * Envoy's {@code HeaderMutationRules}): which headers a stage may see (input filtering), which changes it may ask for
 * (mutation validation), and how accepted changes are applied. Facts and vectors:
 * {@code tests/data/conformance/header_rules.txt}.
 *
 * <h2>Protected headers</h2>
 * The rows of {@link HeaderTable} (the one classification, shared with the proxy and the SigV4 signer) serve input
 * filtering (column "hidden from middleware") and mutation rejection (column "protected from mutation"); today both
 * columns hold the same fields (RFC 0009, "The middleware contract": "OpenShell omits credential-bearing, routing,
 * framing, hop-by-hop, and Connection-nominated headers"). Names are compared after ASCII lowercasing:
 * <ul>
 *   <li>credential: {@code authorization}, {@code proxy-authorization}, {@code proxy-authenticate}, {@code cookie},
 *       every {@code x-amz-*} (SigV4) and every {@code x-openshell-credential*};</li>
 *   <li>routing: {@code host};</li>
 *   <li>framing (RFC 9112 section 6): {@code content-length}, {@code transfer-encoding};</li>
 *   <li>hop-by-hop (RFC 9110 section 7.6.1): {@code connection}, {@code proxy-connection}, {@code keep-alive},
 *       {@code te}, {@code trailer}, {@code upgrade};</li>
 *   <li>Connection-nominated: every token listed in the request's {@code Connection} header lines, per request.</li>
 * </ul>
 * {@code set-cookie}, {@code x-api-key} and {@code api-key} are deliberately not protected.
 *
 * <h2>Mutations</h2>
 * {@link #apply} validates all of a stage's mutations before applying any (all-or-nothing). Checks, in order, per
 * mutation (the first failure is reported):
 * <ul>
 *   <li>list: at most {@link EnvelopeLimits#MAX_HEADER_MUTATIONS} (64) mutations, checked first;</li>
 *   <li>write: name is a non-empty token, not protected, not Connection-nominated, starts with
 *       {@value #MIDDLEWARE_PREFIX}; value is safe ({@link #isSafeValue}); running size within
 *       {@link EnvelopeLimits#MAX_HEADER_MUTATION_BYTES} (32 KiB of lowercased name plus value bytes); then
 *       {@code on_existing} is {@code APPEND}, {@code OVERWRITE} or {@code SKIP};</li>
 *   <li>remove: name is a non-empty token, not protected, not Connection-nominated; running size adds the name's
 *       bytes.</li>
 * </ul>
 * Semantics: {@code APPEND} adds a line at the end; {@code OVERWRITE} removes every line of that name and adds one at
 * the end; {@code SKIP} leaves existing lines alone; all three add the header when it is absent. A remove deletes
 * every line of that name, compared case-insensitively; removing an absent header is not an error. Written names are
 * stored lowercased.
 *
 * <p>Instances are thread-safe. Each instance counts its rejections per {@link HeaderMutationError.Kind}, for metrics.
 */
public final class HeaderRules {
    /** The only namespace stages may write: {@value}. */
    public static final String MIDDLEWARE_PREFIX = HeaderTable.MIDDLEWARE_PREFIX;

    private final Map<HeaderMutationError.Kind, LongAdder> rejections = new EnumMap<>(HeaderMutationError.Kind.class);

    /** Creates rules with zeroed rejection counters. */
    public HeaderRules() {
        for (HeaderMutationError.Kind kind : HeaderMutationError.Kind.values()) {
            rejections.put(kind, new LongAdder());
        }
    }

    // ---------------------------------------------------------------------------------------------- classification

    /**
     * {@return why a header name is statically protected from mutation, or empty when it is not} The row of
     * {@link HeaderTable}; Connection-nominated names are per request: see {@link #connectionNominated}.
     *
     * @param name a header name in any case; never {@code null}
     */
    public static Optional<HeaderTable.Kind> protection(String name) {
        return HeaderTable.row(asciiLower(name)).filter(HeaderTable.Row::protectedFromMutation)
                .map(HeaderTable.Row::kind);
    }

    /**
     * {@return whether a name is statically protected from mutation ({@link HeaderTable#protectedFromMutation})}
     *
     * @param name a header name in any case; never {@code null}
     */
    public static boolean isProtected(String name) {
        return HeaderTable.protectedFromMutation(asciiLower(name));
    }

    /**
     * {@return whether {@code s} is a non-empty RFC 9110 token}: the rule is {@link Syntax#isToken(CharSequence)};
     * this delegation serves the callers of the old spot.
     *
     * @param s a candidate; never {@code null}
     */
    public static boolean isToken(String s) {
        return Syntax.isToken(s);
    }

    /**
     * {@return whether {@code value} may be written as a header value}: HTAB, {@code 0x20..0x7E} and non-ASCII
     * characters (RFC 9110 section 5.5 obs-text once encoded) are safe; CR, LF, NUL, every other C0 control, DEL and
     * unpaired UTF-16 surrogates (which have no UTF-8 encoding) are not.
     *
     * @param value a candidate; never {@code null}
     */
    public static boolean isSafeValue(String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (!Syntax.isFieldValueChar(c)) {
                return false;
            }
            if (c < 0x80) {
                continue;
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < value.length() && Character.isLowSurrogate(value.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return false;
            }
            if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    // ---------------------------------------------------------------------------------------------- input side

    /**
     * Parses the field lines of a request's header section (RFC 9112 section 5), without the start line.
     *
     * <p>Lines end with CRLF; parsing stops at the first empty line or at the end of {@code section}. Names are
     * lowercased; values lose leading and trailing spaces and tabs; order and duplicates are kept. These are errors,
     * never silently dropped: a line starting with a space or tab (obs-fold, section 5.2), a line without a colon,
     * whitespace between the name and the colon (section 5.1), a name that is not a token, a value with a control
     * character, and a CR or LF that is not part of a CRLF.
     *
     * @param section the header section decoded as ISO-8859-1 (one char per byte); never {@code null}
     * @return the field lines; unmodifiable
     * @throws MalformedHeaderException naming the line number and the rule broken (never the line's content)
     */
    public static List<HttpHeader> parseFieldLines(String section) {
        List<HttpHeader> out = new ArrayList<>();
        int pos = 0;
        int lineNo = 0;
        while (pos < section.length()) {
            lineNo++;
            int end = section.indexOf("\r\n", pos);
            String line = end < 0 ? section.substring(pos) : section.substring(pos, end);
            pos = end < 0 ? section.length() : end + 2;
            if (line.isEmpty()) {
                break;
            }
            out.add(parseFieldLine(line, lineNo));
        }
        return Collections.unmodifiableList(out);
    }

    private static HttpHeader parseFieldLine(String line, int lineNo) {
        if (line.indexOf('\r') >= 0 || line.indexOf('\n') >= 0) {
            throw new MalformedHeaderException("header_bare_line_break", lineNo,
                    "a CR or LF outside a CRLF line ending");
        }
        char first = line.charAt(0);
        if (first == ' ' || first == '\t') {
            throw new MalformedHeaderException("header_obs_fold", lineNo,
                    "obsolete line folding (a line starting with a space or tab) is not accepted");
        }
        int colon = line.indexOf(':');
        if (colon < 0) {
            throw new MalformedHeaderException("header_missing_colon", lineNo, "no colon after the field name");
        }
        String name = line.substring(0, colon);
        char last = name.isEmpty() ? 'x' : name.charAt(name.length() - 1);
        if (last == ' ' || last == '\t') {
            throw new MalformedHeaderException("header_whitespace_before_colon", lineNo,
                    "whitespace between the field name and the colon");
        }
        if (!Syntax.isToken(name)) {
            throw new MalformedHeaderException("header_invalid_name", lineNo, "the field name is not a token");
        }
        int from = colon + 1;
        int to = line.length();
        while (from < to && isOws(line.charAt(from))) {
            from++;
        }
        while (to > from && isOws(line.charAt(to - 1))) {
            to--;
        }
        for (int i = from; i < to; i++) {
            char c = line.charAt(i);
            if (!Syntax.isFieldValueChar(c)) {
                throw new MalformedHeaderException("header_invalid_value", lineNo,
                        "the field value holds a control character");
            }
        }
        return new HttpHeader(asciiLower(name), line.substring(from, to));
    }

    /**
     * {@return the names nominated by the request's {@code Connection} header lines (RFC 9110 section 7.6.1):
     * every comma-separated token, lowercased, trimmed, without empties; sorted; unmodifiable}
     *
     * @param headers the request's header lines, in any case; never {@code null}
     */
    public static Set<String> connectionNominated(List<HttpHeader> headers) {
        TreeSet<String> names = null;
        for (HttpHeader h : headers) {
            if (!h.name().equalsIgnoreCase("connection")) {
                continue;
            }
            for (String part : h.value().split(",", -1)) {
                String token = trimOws(part);
                if (!token.isEmpty()) {
                    if (names == null) {
                        names = new TreeSet<>();
                    }
                    names.add(asciiLower(token));
                }
            }
        }
        return names == null ? Collections.emptySortedSet() : Collections.unmodifiableSortedSet(names);
    }

    /**
     * {@return the header lines a stage may see: {@code headers} in order, with duplicates, minus statically
     * protected and Connection-nominated names; unmodifiable}
     *
     * @param headers the request's header lines; never {@code null}
     * @param nominated the lowercased Connection-nominated names ({@link #connectionNominated}); never {@code null}
     */
    public static List<HttpHeader> visible(List<HttpHeader> headers, Set<String> nominated) {
        List<HttpHeader> out = new ArrayList<>(headers.size());
        for (HttpHeader h : headers) {
            String lower = asciiLower(h.name());
            if (!HeaderTable.hiddenFromMiddleware(lower) && !nominated.contains(lower)) {
                out.add(h);
            }
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * Removes every {@code x-openshell-middleware-*} line the sandbox sent itself.
     *
     * <p>Decision (the issue left it open): a request that arrives from the sandbox with headers in the middleware
     * output namespace is spoofing middleware output; the supervisor <em>strips</em> those lines rather than
     * rejecting the request, and reports the count so the proxy can record a finding. Stripping keeps the namespace
     * owned by middleware (an upstream can trust that every {@code x-openshell-middleware-*} line was written by a
     * stage that ran), keeps a stage's {@code SKIP} write from being suppressed by a forged line, and does not break
     * agents that forward headers blindly. The proxy applies it to every request it parses, with or without a chain,
     * like Envoy strips its internal {@code x-envoy-*} headers from untrusted clients.
     *
     * @param headers the request's header lines as received; never {@code null}
     * @return the lines without the namespace, and how many were removed; {@code headers} itself when none were
     */
    public static StrippedHeaders stripMiddlewareNamespace(List<HttpHeader> headers) {
        int first = -1;
        for (int i = 0; i < headers.size(); i++) {
            if (inMiddlewareNamespace(headers.get(i).name())) {
                first = i;
                break;
            }
        }
        if (first < 0) {
            return new StrippedHeaders(headers, 0);
        }
        List<HttpHeader> kept = new ArrayList<>(headers.size() - 1);
        kept.addAll(headers.subList(0, first));
        int stripped = 0;
        for (int i = first; i < headers.size(); i++) {
            HttpHeader h = headers.get(i);
            if (inMiddlewareNamespace(h.name())) {
                stripped++;
            } else {
                kept.add(h);
            }
        }
        return new StrippedHeaders(Collections.unmodifiableList(kept), stripped);
    }

    // ---------------------------------------------------------------------------------------------- mutations

    /**
     * Validates a stage's mutations and, when all are valid, applies them in order (see the class comment).
     *
     * @param existing the request's complete header list (including protected lines); never {@code null}
     * @param nominated the lowercased Connection-nominated names of this request; never {@code null}
     * @param mutations the stage's mutations, in order; never {@code null}
     * @return the new header list, or the first rule broken (and then nothing is applied)
     */
    public MutationOutcome apply(List<HttpHeader> existing, Set<String> nominated, List<HeaderMutation> mutations) {
        HeaderMutationError error = validate(nominated, mutations);
        if (error != null) {
            rejections.get(error.kind()).increment();
            return new MutationOutcome.Rejected(error);
        }
        if (mutations.isEmpty()) {
            return new MutationOutcome.Applied(existing, false);
        }
        List<HttpHeader> out = new ArrayList<>(existing.size() + mutations.size());
        out.addAll(existing);
        boolean changed = false;
        for (HeaderMutation m : mutations) {
            String lower = asciiLower(m.name());
            switch (m) {
                case HeaderMutation.WriteHeader w -> {
                    switch (w.onExisting()) {
                        case APPEND -> out.add(new HttpHeader(lower, w.value()));
                        case OVERWRITE -> {
                            out.removeIf(h -> h.name().equalsIgnoreCase(lower));
                            out.add(new HttpHeader(lower, w.value()));
                        }
                        case SKIP -> {
                            if (out.stream().anyMatch(h -> h.name().equalsIgnoreCase(lower))) {
                                continue;
                            }
                            out.add(new HttpHeader(lower, w.value()));
                        }
                        default -> throw new IllegalStateException("validated action " + w.onExisting());
                    }
                    changed = true;
                }
                case HeaderMutation.RemoveHeader r -> changed |= out.removeIf(h -> h.name().equalsIgnoreCase(lower));
            }
        }
        return new MutationOutcome.Applied(out, changed && !out.equals(existing));
    }

    /**
     * {@return the first rule broken by {@code mutations}, or {@code null} when all are valid} Counts nothing.
     *
     * @param nominated the lowercased Connection-nominated names
     * @param mutations the mutations, in order
     */
    static HeaderMutationError validate(Set<String> nominated, List<HeaderMutation> mutations) {
        if (mutations.size() > EnvelopeLimits.MAX_HEADER_MUTATIONS) {
            return new HeaderMutationError(HeaderMutationError.Kind.TOO_MANY, "", mutations.size());
        }
        long bytes = 0;
        for (HeaderMutation m : mutations) {
            String name = m.name();
            if (!Syntax.isToken(name)) {
                return error(HeaderMutationError.Kind.INVALID_NAME, name);
            }
            String lower = asciiLower(name);
            if (isProtected(lower)) {
                return error(HeaderMutationError.Kind.PROTECTED, name);
            }
            if (nominated.contains(lower)) {
                return error(HeaderMutationError.Kind.HOP_BY_HOP, name);
            }
            switch (m) {
                case HeaderMutation.WriteHeader w -> {
                    if (!lower.startsWith(MIDDLEWARE_PREFIX)) {
                        return error(HeaderMutationError.Kind.WRITE_NAMESPACE, name);
                    }
                    if (!isSafeValue(w.value())) {
                        return error(HeaderMutationError.Kind.UNSAFE_VALUE, name);
                    }
                    bytes += EnvelopeLimits.headerMutationBytes(m);
                    if (bytes > EnvelopeLimits.MAX_HEADER_MUTATION_BYTES) {
                        return error(HeaderMutationError.Kind.TOO_LARGE, "");
                    }
                    switch (w.onExisting()) {
                        case APPEND, OVERWRITE, SKIP -> { }
                        case UNSPECIFIED -> {
                            return error(HeaderMutationError.Kind.MISSING_EXISTING_ACTION, name);
                        }
                        case UNRECOGNIZED -> {
                            return error(HeaderMutationError.Kind.INVALID_EXISTING_ACTION, "");
                        }
                    }
                }
                case HeaderMutation.RemoveHeader r -> {
                    bytes += EnvelopeLimits.headerMutationBytes(m);
                    if (bytes > EnvelopeLimits.MAX_HEADER_MUTATION_BYTES) {
                        return error(HeaderMutationError.Kind.TOO_LARGE, "");
                    }
                }
            }
        }
        return null;
    }

    void count(HeaderMutationError.Kind kind) {
        rejections.get(kind).increment();
    }

    /**
     * {@return how many mutation lists this instance has rejected for {@code kind}}
     *
     * @param kind the rule
     */
    public long rejections(HeaderMutationError.Kind kind) {
        return rejections.get(kind).sum();
    }

    /**
     * {@return whether {@code name} is in the {@value #MIDDLEWARE_PREFIX} namespace}
     *
     * @param name a header name
     */
    public static boolean inMiddlewareNamespace(String name) {
        return name.regionMatches(true, 0, MIDDLEWARE_PREFIX, 0, MIDDLEWARE_PREFIX.length());
    }

    private static HeaderMutationError error(HeaderMutationError.Kind kind, String name) {
        return new HeaderMutationError(kind, name, 0);
    }

    private static boolean isOws(char c) {
        return c == ' ' || c == '\t';
    }

    private static String trimOws(String s) {
        int from = 0;
        int to = s.length();
        while (from < to && isOws(s.charAt(from))) {
            from++;
        }
        while (to > from && isOws(s.charAt(to - 1))) {
            to--;
        }
        return s.substring(from, to);
    }

    /** {@return {@code s} with ASCII capitals lowercased and nothing else changed (no locale rules)} */
    static String asciiLower(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                char[] chars = s.toCharArray();
                for (int j = i; j < chars.length; j++) {
                    char d = chars[j];
                    if (d >= 'A' && d <= 'Z') {
                        chars[j] = (char) (d + ('a' - 'A'));
                    }
                }
                return new String(chars);
            }
        }
        return s;
    }
}
