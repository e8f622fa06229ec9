package dev.openshell.supervisor.policy;

import dev.openshell.supervisor.policy.internal.Texts;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A DNS-label-aware host pattern (RFC 0009, "Policy integration": "Matching is case-insensitive and uses the same
 * host-pattern implementation as network endpoints").
 *
 * <h2>Grammar</h2>
 * A pattern is one or more DNS labels separated by {@code .}, at most {@value #MAX_LENGTH} characters in all and at
 * most {@value #MAX_LABEL_LENGTH} per label. A label is either
 * <ul>
 *   <li>{@code **}: one or more whole labels (so {@code **.example.com} matches {@code api.example.com} and
 *       {@code a.b.example.com} but not {@code example.com}); {@code **} must be the whole label;</li>
 *   <li>a label glob of letters {@code a-z} (any case), digits, {@code -}, {@code _} and {@code :} (for IPv6
 *       literals, written without brackets), with the wildcards {@code *} (any run of characters within the label,
 *       possibly empty, never a {@code .}) and {@code ?} (exactly one character). A label that is only {@code *}
 *       therefore matches exactly one whole label.</li>
 * </ul>
 * Rejected, each with a message saying why: the empty pattern; whitespace; brace alternates ({@code {a,b}}: list each
 * alternative as its own pattern); character classes ({@code [...]}); empty labels (a leading, trailing or doubled
 * {@code .}); URL and authority parts (a scheme {@code https://}, userinfo {@code user@}, a path or fragment, a port
 * {@code :443} or {@code :*}: a {@code :} is kept only in a pattern shaped like an IPv6 address, two {@code :} or
 * more with hex digits and wildcards); any other character, including non-ASCII (write internationalised names in
 * their {@code xn--} form).
 * Patterns are compared case-insensitively: {@link #source()} is the lowercase form, and two patterns are equal when
 * their lowercase forms are.
 *
 * <h2>Matching hosts</h2>
 * {@link #matches(String)} compares ASCII letters case-insensitively and never matches a host with an empty label:
 * {@code ""}, {@code "a..b"} and {@code "api.example.com."} (a trailing dot) match no pattern at all, not even
 * {@code **}. The matcher does not normalise: a caller that accepts the absolute form {@code api.example.com.} must
 * pass the host through {@link #canonicalHost(String)} once, before admission and before middleware selection, so
 * that both see the same name. A caller that forgets fails closed (the host is admitted by no endpoint) rather than
 * open.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class HostPattern {
    /** Longest pattern, in characters (the longest DNS name). */
    public static final int MAX_LENGTH = 253;
    /** Longest label, in characters (the longest DNS label). */
    public static final int MAX_LABEL_LENGTH = 63;

    static final char STAR = '*';
    static final char ANY = '?';

    private final String source;
    /** One entry per label: {@code null} for {@code **}, else the label glob (lowercase). */
    private final String[] labels;

    private HostPattern(String source, String[] labels) {
        this.source = source;
        this.labels = labels;
    }

    /**
     * Parses a pattern.
     *
     * @param text the pattern as written; never {@code null}
     * @return the pattern
     * @throws IllegalArgumentException with the message {@code invalid host pattern '<text>': <reason>}
     */
    public static HostPattern parse(String text) {
        Objects.requireNonNull(text, "host pattern");
        String problem = problem(text);
        if (problem != null) {
            throw new IllegalArgumentException("invalid host pattern " + Texts.quote(text) + ": " + problem);
        }
        String lower = asciiLowercase(text);
        String[] parts = lower.split("\\.", -1);
        String[] labels = new String[parts.length];
        for (int i = 0; i < parts.length; i++) {
            labels[i] = parts[i].equals("**") ? null : parts[i];
        }
        return new HostPattern(lower, labels);
    }

    /**
     * {@return {@code null} when {@code text} is a valid pattern, else the reason it is not, safe to show}
     *
     * @param text a candidate pattern; never {@code null}
     */
    public static String problem(String text) {
        if (text.isEmpty()) {
            return "it is empty";
        }
        if (text.length() > MAX_LENGTH) {
            return "it is longer than " + MAX_LENGTH + " characters";
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c) || Character.isSpaceChar(c)) {
                return "it contains whitespace";
            }
        }
        if (text.indexOf('{') >= 0 || text.indexOf('}') >= 0) {
            return "brace alternates are not supported: list each alternative as its own pattern";
        }
        if (text.indexOf('[') >= 0 || text.indexOf(']') >= 0) {
            return "character classes ('[...]') are not supported: list each alternative as its own pattern"
                    + " (write IPv6 addresses without brackets)";
        }
        String shape = urlPart(text);
        if (shape != null) {
            return shape;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c > 0x7e) {
                return "it contains the non-ASCII character " + Texts.describeChar(text.codePointAt(i))
                        + ": write internationalised names in their ASCII ('xn--') form";
            }
            if (!isPatternChar(c)) {
                return "it contains " + Texts.describeChar(c) + ", which cannot appear in a host name";
            }
        }
        String[] parts = text.split("\\.", -1);
        for (String label : parts) {
            if (label.isEmpty()) {
                return "it has an empty DNS label (a leading, trailing or doubled '.')";
            }
        }
        for (String label : parts) {
            if (label.length() > MAX_LABEL_LENGTH) {
                return "DNS label " + Texts.quote(label) + " is longer than " + MAX_LABEL_LENGTH + " characters";
            }
            if (!label.equals("**") && label.contains("**")) {
                return "'**' must be a whole DNS label, as in '**.example.com'";
            }
        }
        return null;
    }

    /**
     * {@return why {@code text} is a URL or an authority rather than a host name (a scheme, userinfo, a path, a
     * fragment or a port), or {@code null}} A {@code :} belongs only to an IPv6 literal: a pattern with a {@code :}
     * must have at least two and otherwise only hex digits, {@code .} (an embedded IPv4 tail) and wildcards, so
     * {@code api.example.com:443} and {@code api.example.com:*} are refused (they would match no host: hosts are
     * matched without their port) while {@code fe80::*} and {@code ::ffff:10.0.0.1} are kept.
     */
    private static String urlPart(String text) {
        int scheme = text.indexOf("://");
        if (scheme >= 0) {
            return "it has a scheme (" + Texts.quote(text.substring(0, scheme + 3)) + "): write the host name only";
        }
        if (text.indexOf('@') >= 0) {
            return "it has userinfo (text before '@'): write the host name only";
        }
        int path = Math.max(text.indexOf('/'), text.indexOf('#'));
        if (path >= 0) {
            return "it has a path or fragment ('/' or '#'): write the host name only";
        }
        int colon = text.indexOf(':');
        if (colon < 0 || isIpv6Shaped(text)) {
            return null;
        }
        int last = text.lastIndexOf(':');
        return "it has a port (" + Texts.quote(text.substring(last)) + "): host patterns match the host name"
                + " without its port, so this one would match no host; give the port in the endpoint's port or"
                + " ports (a ':' appears in a host pattern only in an IPv6 address, written without brackets)";
    }

    /** {@return whether a pattern with a {@code :} can be an IPv6 literal: two colons or more, hex digits} */
    private static boolean isIpv6Shaped(String text) {
        int colons = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == ':') {
                colons++;
            } else if (!isHexDigit(c) && c != '.' && c != STAR && c != ANY) {
                return false;
            }
        }
        return colons >= 2;
    }

    /**
     * {@return whether {@code text} is a valid pattern}
     *
     * @param text a candidate pattern; never {@code null}
     */
    public static boolean isValid(String text) {
        return problem(text) == null;
    }

    /**
     * Canonicalises a request host for matching: ASCII letters are lowercased and one trailing {@code .} (the
     * absolute form of a DNS name) is removed. Nothing else changes, so a host with an empty label stays unmatchable.
     *
     * @param host the host as received (without port; an IPv6 literal without brackets); never {@code null}
     * @return the canonical host
     */
    public static String canonicalHost(String host) {
        String h = host.length() > 1 && host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
        return asciiLowercase(h);
    }

    /** {@return the pattern in lowercase, as it is matched and compared} */
    public String source() {
        return source;
    }

    /** {@return whether the pattern has no wildcard, so that it matches exactly one host} */
    public boolean isLiteral() {
        for (String label : labels) {
            if (label == null || label.indexOf(STAR) >= 0 || label.indexOf(ANY) >= 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Matches one host.
     *
     * @param host the host, without port; never {@code null}. Not normalised: see the class documentation
     * @return whether the pattern matches; always {@code false} for a host with an empty label
     */
    public boolean matches(String host) {
        Objects.requireNonNull(host, "host");
        if (host.isEmpty()) {
            return false;
        }
        return labels.length < Long.SIZE ? matchesWithoutAllocation(host) : matchesLong(host);
    }

    /**
     * The matcher of {@link #matches} for patterns of fewer than 64 labels (every realistic one): the states of the
     * label automaton are the bits of a {@code long} (state {@code i}: the first {@code i} pattern labels are
     * consumed), host labels are regions of {@code host}, so a request's selection allocates nothing.
     */
    private boolean matchesWithoutAllocation(String host) {
        int n = labels.length;
        long current = 1L;
        int start = 0;
        int length = host.length();
        for (int i = 0; i <= length; i++) {
            if (i < length && host.charAt(i) != '.') {
                continue;
            }
            if (i == start) {
                return false; // an empty label
            }
            long next = 0L;
            for (long states = current; states != 0; states &= states - 1) {
                int state = Long.numberOfTrailingZeros(states);
                if (state == n) {
                    continue; // every pattern label is consumed: no move on a further host label
                }
                String glob = labels[state];
                if (glob == null) {
                    next |= (1L << state) | (1L << (state + 1));
                } else if (globMatches(glob, host, start, i)) {
                    next |= 1L << (state + 1);
                }
            }
            if (next == 0L) {
                return false;
            }
            current = next;
            start = i + 1;
        }
        return (current & (1L << n)) != 0;
    }

    /** The matcher of {@link #matches} for patterns of 64 labels or more. */
    private boolean matchesLong(String host) {
        List<String> hostLabels = splitHost(host);
        if (hostLabels == null) {
            return false;
        }
        int n = labels.length;
        boolean[] current = new boolean[n + 1];
        current[0] = true;
        for (String hostLabel : hostLabels) {
            boolean[] next = new boolean[n + 1];
            boolean any = false;
            for (int i = 0; i < n; i++) {
                if (!current[i]) {
                    continue;
                }
                if (labels[i] == null) {
                    next[i] = true;
                    next[i + 1] = true;
                    any = true;
                } else if (globMatches(labels[i], hostLabel)) {
                    next[i + 1] = true;
                    any = true;
                }
            }
            if (!any) {
                return false;
            }
            current = next;
        }
        return current[n];
    }

    /**
     * Decides exactly whether some host is matched both by this pattern and by {@code other}. The answer is exact,
     * not an approximation: it is computed on the languages of the two patterns (see {@link #sharedHost}).
     *
     * @param other another pattern; never {@code null}
     * @return whether the two patterns match at least one common host; symmetric
     * @throws IllegalStateException if the patterns are too complex to compare within a fixed work budget (far
     *     beyond any realistic pattern)
     */
    public boolean overlaps(HostPattern other) {
        return sharedHost(other).isPresent();
    }

    /**
     * Finds a host matched both by this pattern and by {@code other}.
     *
     * @param other another pattern; never {@code null}
     * @return a shortest such host (deterministic for a given pair), or empty when the patterns are disjoint
     * @throws IllegalStateException if the patterns are too complex to compare within a fixed work budget
     */
    public Optional<String> sharedHost(HostPattern other) {
        Objects.requireNonNull(other, "other");
        return HostLanguage.witness(List.of(this, other), List.of());
    }

    /** {@return the number of labels} */
    int labelCount() {
        return labels.length;
    }

    /**
     * {@return label {@code i}'s glob, or {@code null} for {@code **}}
     *
     * @param i the index
     */
    String label(int i) {
        return labels[i];
    }

    /**
     * Matches one label glob against one host label: {@code *} any run of characters (possibly empty), {@code ?}
     * one character, everything else itself, ASCII case-insensitively.
     */
    static boolean globMatches(String glob, String hostLabel) {
        return globMatches(glob, hostLabel, 0, hostLabel.length());
    }

    /** {@link #globMatches(String, String)} on the host label {@code host[from, to)}, without copying it. */
    static boolean globMatches(String glob, String host, int from, int to) {
        int g = 0;
        int h = from;
        int starAt = -1;
        int resumeAt = from;
        while (h < to) {
            if (g < glob.length()) {
                char p = glob.charAt(g);
                if (p == STAR) {
                    starAt = g++;
                    resumeAt = h;
                    continue;
                }
                if (p == ANY || p == asciiLower(host.charAt(h))) {
                    g++;
                    h++;
                    continue;
                }
            }
            if (starAt < 0) {
                return false;
            }
            g = starAt + 1;
            h = ++resumeAt;
        }
        while (g < glob.length() && glob.charAt(g) == STAR) {
            g++;
        }
        return g == glob.length();
    }

    /** {@return the labels of {@code host}, or {@code null} when a label is empty} */
    private static List<String> splitHost(String host) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= host.length(); i++) {
            if (i == host.length() || host.charAt(i) == '.') {
                if (i == start) {
                    return null;
                }
                out.add(host.substring(start, i));
                start = i + 1;
            }
        }
        return out;
    }

    private static boolean isHexDigit(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    private static boolean isPatternChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                || c == '-' || c == '_' || c == ':' || c == '.' || c == STAR || c == ANY;
    }

    static char asciiLower(char c) {
        return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
    }

    static String asciiLowercase(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 'A' && c <= 'Z') {
                char[] chars = s.toCharArray();
                for (int j = i; j < chars.length; j++) {
                    chars[j] = asciiLower(chars[j]);
                }
                return new String(chars);
            }
        }
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostPattern other && source.equals(other.source);
    }

    @Override
    public int hashCode() {
        return source.hashCode();
    }

    /** {@return the lowercase pattern} */
    @Override
    public String toString() {
        return source;
    }
}
