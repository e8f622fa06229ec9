package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.internal.Syntax;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A canonical HTTP request-target: the form that L7 rules match, that middleware sees as the target path, and that is
 * forwarded upstream ({@code docs/policy-reference.md}, "Request-target canonicalization"; OpenShell's
 * {@code l7/path.rs}, which this follows step by step).
 *
 * <p>Steps, in order: refuse control bytes (0x00-0x1F, 0x7F, TAB included) and raw non-ASCII bytes; refuse a fragment
 * ({@code #}); split the query at the first {@code ?} (kept verbatim); strip the authority of an absolute-form target
 * ({@code http://host:port/...}, RFC 9112 section 3.2.2); an empty path becomes {@code /}, any other must start with
 * {@code /} (so {@code OPTIONS *} is refused); refuse paths longer than {@value #MAX_PATH_CHARS} characters;
 * percent-decode every {@code %HH} (a malformed escape, a decoded control byte, or {@code %2F} unless the endpoint sets
 * {@code allow_encoded_slash} is refused); split on {@code /}; strip {@code ;params} from each segment before dot
 * handling; remove dot segments (RFC 3986 section 5.2.4; {@code ..} above the root is refused), collapse repeated
 * {@code /}, keep a trailing {@code /}; re-encode: unreserved characters, sub-delims, {@code :} and {@code @} literal,
 * everything else as upper-case {@code %HH}, a kept encoded slash as {@code %2F}.
 *
 * <p>Canonicalization is idempotent: canonicalizing a canonical target yields it unchanged. A canonical path never
 * contains a {@code .} or {@code ..} segment, an empty segment (other than a trailing {@code /}), nor a {@code /}
 * that came from {@code %2F}.
 *
 * @param path the canonical path, starting with {@code /}
 * @param query the query as received, without the {@code ?}, if the target had one
 * @param authority the authority of an absolute-form target, as received (for the caller's {@code Host} check)
 * @param encodedSlash whether the path keeps an encoded slash ({@code %2F}; only when it was allowed)
 */
public record RequestTarget(String path, Optional<String> query, Optional<String> authority, boolean encodedSlash) {
    /** The longest path accepted, in characters as received. */
    public static final int MAX_PATH_CHARS = 4096;

    /** Checks the components. @throws NullPointerException if any is {@code null} */
    public RequestTarget {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(query, "query");
        Objects.requireNonNull(authority, "authority");
    }

    /** Why a request-target was refused. The message names the rule, never the target's content. */
    public static final class InvalidTargetException extends Exception {
        private static final long serialVersionUID = 1L;

        /** @param message the rule the target broke */
        public InvalidTargetException(String message) {
            super(message);
        }
    }

    /** {@return the target to forward: the canonical path and the query, if any} */
    public String target() {
        return query.map(q -> path + "?" + q).orElse(path);
    }

    /**
     * Canonicalizes a request-target as received on the request line.
     *
     * @param raw the request-target (origin form or absolute form)
     * @param allowEncodedSlash whether {@code %2F} is kept (as {@code %2F}) instead of refused
     * @return the canonical target
     * @throws InvalidTargetException if the target breaks a rule above
     */
    public static RequestTarget canonicalize(String raw, boolean allowEncodedSlash) throws InvalidTargetException {
        Objects.requireNonNull(raw, "raw");
        checkCharacters(raw);
        String rest = raw;
        Optional<String> query = Optional.empty();
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = Optional.of(rest.substring(q + 1));
            rest = rest.substring(0, q);
        }
        Optional<String> authority = Optional.empty();
        int scheme = schemeEnd(rest);
        if (scheme > 0) {
            int start = scheme + 3;
            int slash = rest.indexOf('/', start);
            authority = Optional.of(rest.substring(start, slash < 0 ? rest.length() : slash));
            rest = slash < 0 ? "" : rest.substring(slash);
        }
        if (rest.isEmpty()) {
            rest = "/";
        }
        if (rest.charAt(0) != '/') {
            throw new InvalidTargetException("the request-target must be an absolute path starting with /");
        }
        if (rest.length() > MAX_PATH_CHARS) {
            throw new InvalidTargetException("the request path is longer than " + MAX_PATH_CHARS + " characters");
        }
        int[] decoded = new int[rest.length()];
        int n = decodePath(rest, allowEncodedSlash, decoded);
        Segments segments = segments(decoded, n);
        StringBuilder out = new StringBuilder(rest.length() + 8);
        boolean keptSlash = encode(segments.stack(), out);
        if (segments.stack().isEmpty() || segments.trailingSlash()) {
            out.append('/');
        }
        return new RequestTarget(out.toString(), query, authority, keptSlash);
    }

    /** Refuses controls, non-ASCII characters and a fragment anywhere in the raw target. */
    private static void checkCharacters(String raw) throws InvalidTargetException {
        for (int i = 0; i < raw.length(); i++) {
            char c = raw.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                throw new InvalidTargetException("the request-target contains a control character");
            }
            if (c > 0x7E) {
                throw new InvalidTargetException("the request-target contains a non-ASCII character; send it"
                        + " percent-encoded");
            }
            if (c == '#') {
                throw new InvalidTargetException("the request-target contains a fragment (#)");
            }
        }
    }

    /**
     * Percent-decodes the path into octets ({@link #ENCODED_SLASH} marks a kept {@code %2F}).
     *
     * @return how many entries of {@code decoded} it filled
     */
    private static int decodePath(String rest, boolean allowEncodedSlash, int[] decoded) throws InvalidTargetException {
        int n = 0;
        for (int i = 0; i < rest.length(); i++) {
            char c = rest.charAt(i);
            if (c != '%') {
                decoded[n++] = c;
                continue;
            }
            int hi = i + 2 < rest.length() ? Syntax.hexDigit(rest.charAt(i + 1)) : -1;
            int lo = i + 2 < rest.length() ? Syntax.hexDigit(rest.charAt(i + 2)) : -1;
            if (hi < 0 || lo < 0) {
                throw new InvalidTargetException("the request path has a malformed percent-escape");
            }
            int b = hi * 16 + lo;
            i += 2;
            if (b < 0x20 || b == 0x7F) {
                throw new InvalidTargetException("the request path encodes a control character");
            }
            if (b == '/' && !allowEncodedSlash) {
                throw new InvalidTargetException("the request path contains an encoded slash (%2F), which this"
                        + " endpoint does not allow (allow_encoded_slash)");
            }
            decoded[n++] = b == '/' ? ENCODED_SLASH : b;
        }
        return n;
    }

    /** The path's segments after dot-segment removal, and whether the canonical path ends in {@code /}. */
    private record Segments(List<int[]> stack, boolean trailingSlash) {
    }

    /** Removes dot segments ({@code .}, {@code ..}, empty) and path parameters' effect on them (RFC 3986, 5.2.4). */
    private static Segments segments(int[] decoded, int n) throws InvalidTargetException {
        List<int[]> stack = new ArrayList<>();
        boolean trailing = false;
        int segStart = 1;
        boolean sawSlash = false;
        for (int i = 1; i <= n; i++) {
            if (i < n && decoded[i] != '/') {
                continue;
            }
            boolean last = i == n;
            int end = segStart;
            while (end < i && decoded[end] != ';') {
                end++;
            }
            int len = end - segStart;
            boolean dot = len == 1 && decoded[segStart] == '.';
            boolean dotdot = len == 2 && decoded[segStart] == '.' && decoded[segStart + 1] == '.';
            if (dotdot) {
                if (stack.isEmpty()) {
                    throw new InvalidTargetException("the request path climbs above the root (..)");
                }
                stack.remove(stack.size() - 1);
                trailing = last;
            } else if (dot || len == 0) {
                trailing = last;
            } else {
                int[] seg = new int[len];
                System.arraycopy(decoded, segStart, seg, 0, len);
                stack.add(seg);
                trailing = false;
            }
            sawSlash |= !last;
            segStart = i + 1;
        }
        return new Segments(stack, trailing && sawSlash);
    }

    /** Writes the segments, percent-encoding what is not a literal; {@return whether a {@code %2F} was kept} */
    private static boolean encode(List<int[]> stack, StringBuilder out) {
        boolean keptSlash = false;
        for (int[] seg : stack) {
            out.append('/');
            for (int b : seg) {
                if (b == ENCODED_SLASH) {
                    out.append("%2F");
                    keptSlash = true;
                } else if (literal(b)) {
                    out.append((char) b);
                } else {
                    Syntax.appendPercentOctet(out, b, true);
                }
            }
        }
        return keptSlash;
    }

    /**
     * Parses a query into keys and values (OpenShell {@code rest.rs}): pairs split on {@code &}, empty pairs skipped,
     * a key without {@code =} has the value {@code ""}, {@code +} is a space, keys and values are percent-decoded and
     * must be UTF-8. Keys are case-sensitive; values keep their arrival order.
     *
     * @param query the query, without the {@code ?}
     * @return the values by key, in arrival order
     * @throws InvalidTargetException on a malformed escape or a value that is not UTF-8
     */
    public static Map<String, List<String>> parseQuery(String query) throws InvalidTargetException {
        return parseQuery(query, false);
    }

    /**
     * Parses a query as {@link #parseQuery(String)} does, its pairs also split at {@code ;} when asked (as Rack 2 and
     * other form parsers split them; {@link QueryReadings}).
     *
     * @param query the query, without the {@code ?}
     * @param semicolons whether {@code ;} separates pairs too
     * @return the values by key, in arrival order
     * @throws InvalidTargetException on a malformed escape or a value that is not UTF-8
     */
    static Map<String, List<String>> parseQuery(String query, boolean semicolons) throws InvalidTargetException {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String pair : query.split(semicolons ? "[&;]" : "&", -1)) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = decodeComponent(eq < 0 ? pair : pair.substring(0, eq));
            String v = eq < 0 ? "" : decodeComponent(pair.substring(eq + 1));
            out.computeIfAbsent(k, x -> new ArrayList<>()).add(v);
        }
        return out;
    }

    private static String decodeComponent(String s) throws InvalidTargetException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '+') {
                bytes.write(' ');
            } else if (c == '%') {
                if (i + 2 >= s.length() || Syntax.hexDigit(s.charAt(i + 1)) < 0 || Syntax.hexDigit(s.charAt(i + 2)) < 0) {
                    throw new InvalidTargetException("the query has a malformed percent-escape");
                }
                bytes.write(Syntax.hexDigit(s.charAt(i + 1)) * 16 + Syntax.hexDigit(s.charAt(i + 2)));
                i += 2;
            } else if (c > 0x7F) {
                throw new InvalidTargetException("the query contains a non-ASCII character");
            } else {
                bytes.write(c);
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes.toByteArray()))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new InvalidTargetException("the query is not UTF-8 after percent-decoding");
        }
    }

    private static final int ENCODED_SLASH = -1;

    private static boolean literal(int b) {
        return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || "-._~!$&'()*+,;=:@".indexOf(b) >= 0;
    }

    /** {@return the index of {@code ://} after a URI scheme at the start, or -1} */
    private static int schemeEnd(String s) {
        int i = s.indexOf("://");
        if (i <= 0) {
            return -1;
        }
        if (!Character.isLetter(s.charAt(0))) {
            return -1;
        }
        for (int j = 1; j < i; j++) {
            char c = s.charAt(j);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-'
                    || c == '.')) {
                return -1;
            }
        }
        return i;
    }
}
