package dev.openshell.supervisor.l7;

import java.util.Optional;

import org.eclipse.collections.api.list.ImmutableList;

/**
 * The path some origins read where the canonical path ({@link RequestTarget}) keeps a byte they fold
 * ({@code docs/policy-reference.md}, "Path folds"): IIS, ASP.NET and some Node routers read {@code \} (sent raw or as
 * {@code %5C}) as {@code /}, and Windows and IIS drop the dots and spaces that end a segment ({@code /admin./x} and
 * {@code /admin%20/x} reach {@code /admin/x}). L7 rules judge both paths: the canonical one and this folded one.
 *
 * <p>The fold, on a canonical path: every {@code %5C} becomes {@code /}; every segment loses its trailing run of
 * {@code .} and {@code %20}, and a segment of dots and spaces only becomes {@code ..} when it starts with two dots, else
 * {@code .}; the result is made canonical again (dot segments resolved, empty segments collapsed). Letter case is never
 * folded: globs are case-sensitive (decision 1).
 */
final class PathFolds {
    private PathFolds() {
    }

    /**
     * {@return the folded path, when it differs from the canonical one}
     *
     * @param canonical a canonical path ({@link RequestTarget#path()})
     * @throws RequestTarget.InvalidTargetException if the folded path climbs above the root ({@code /a%5C..%5C..})
     */
    static Optional<String> folded(String canonical) throws RequestTarget.InvalidTargetException {
        if (!mayFold(canonical)) {
            return Optional.empty();
        }
        String[] segments = canonical.replace("%5C", "/").split("/", -1);
        StringBuilder out = new StringBuilder(canonical.length());
        for (int i = 1; i < segments.length; i++) {
            out.append('/').append(strip(segments[i]));
        }
        String folded = RequestTarget.canonicalize(out.isEmpty() ? "/" : out.toString(), true).path();
        return folded.equals(canonical) ? Optional.empty() : Optional.of(folded);
    }

    /**
     * {@return whether the endpoints whose {@code path} matches the folded path are those that match the canonical
     * one} False when the folded path climbs above the root.
     *
     * @param governing the endpoints governing the host and port
     * @param matching those whose {@code path} matches the canonical path
     * @param canonical the canonical path
     */
    static boolean sameEndpoints(ImmutableList<L7Engine.Governing> governing,
                                 ImmutableList<L7Engine.Governing> matching, String canonical) {
        Optional<String> folded;
        try {
            folded = folded(canonical);
        } catch (RequestTarget.InvalidTargetException e) {
            return false;
        }
        return folded.isEmpty() || governing.select(g -> g.l7().path().map(p -> p.matches(folded.get()))
                .orElse(true)).equals(matching);
    }

    /** {@return whether a canonical path holds {@code %5C}, or a segment ending in {@code .} or {@code %20}} */
    static boolean mayFold(String canonical) {
        if (canonical.contains("%5C")) {
            return true;
        }
        for (int i = 1; i <= canonical.length(); i++) {
            if ((i == canonical.length() || canonical.charAt(i) == '/')
                    && (canonical.charAt(i - 1) == '.' || canonical.startsWith("%20", i - 3))) {
                return true;
            }
        }
        return false;
    }

    /** {@return a segment without its trailing dots and spaces ({@code %20})} */
    private static String strip(String segment) {
        String s = segment;
        while (s.endsWith(".") || s.endsWith("%20")) {
            s = s.substring(0, s.length() - (s.endsWith(".") ? 1 : 3));
        }
        if (s.isEmpty() && !segment.isEmpty()) {
            return segment.startsWith("..") ? ".." : ".";
        }
        return s;
    }
}
