package dev.openshell.supervisor.l7;

import dev.openshell.supervisor.policy.ValueMatcher;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * How L7 policy reads a query string and parameter names: as the most liberal web framework reads them
 * ({@code docs/policy-reference.md}, "Query readings"). One home for the rule, used by the {@code query} constraints
 * of REST rules and by the {@code _method} check ({@link OverrideForms#find} takes its values from {@link #values},
 * its names read by {@link OverrideForms#isFormParameter}).
 *
 * <p>Pairs: split at {@code &} (RFC-style parsers: servlets, Go, Node, Python 3.10+, Rack 3), and also at {@code ;}
 * (Rack 2, so Rails 6 and Sinatra, older Python). Names: as sent, and as PHP ({@code php_register_variable_ex})
 * registers them: leading spaces dropped, cut at a NUL (it walks the name as a C string), {@code .} and space read as
 * {@code _}, and an array starting at {@code [} ({@code q[]=x} is {@code q}, as for Rack's nested parameters). That
 * gives up to four readings; a rule constraint on key {@code k} is judged on each (on {@code phpName(k)} in the PHP
 * ones): an allow rule must find {@code k} in every reading with every value matching, a deny rule fires when any
 * value of any reading matches. A query without {@code ;} whose names PHP keeps as sent has one reading, as before.
 *
 * <p>Instances are immutable.
 */
final class QueryReadings {
    /** The readings of an empty or absent query. */
    static final QueryReadings NONE = new QueryReadings(List.of(Map.of()), List.of(Map.of()));

    /** The readings with names as sent: split at {@code &}, and at {@code &} and {@code ;} when they differ. */
    private final List<Map<String, List<String>>> asSent;
    /** The same readings with names as PHP registers them ({@link #phpName}). */
    private final List<Map<String, List<String>>> php;

    private QueryReadings(List<Map<String, List<String>>> asSent, List<Map<String, List<String>>> php) {
        this.asSent = asSent;
        this.php = php;
    }

    /**
     * {@return the readings of a query}
     *
     * @param query the query as received, without the {@code ?}
     * @param strict its reading split at {@code &} ({@link RequestTarget#parseQuery(String)}), already made
     * @throws RequestTarget.InvalidTargetException if a part split at {@code ;} is not well-formed (it cannot be, when
     *     {@code strict} was)
     */
    static QueryReadings of(String query, Map<String, List<String>> strict)
            throws RequestTarget.InvalidTargetException {
        List<Map<String, List<String>>> asSent = new ArrayList<>(2);
        asSent.add(strict);
        if (query.indexOf(';') >= 0) {
            asSent.add(RequestTarget.parseQuery(query, true));
        }
        List<Map<String, List<String>>> php = new ArrayList<>(2);
        for (Map<String, List<String>> reading : asSent) {
            php.add(phpNames(reading));
        }
        return new QueryReadings(List.copyOf(asSent), List.copyOf(php));
    }

    /** {@return a reading with its names as PHP registers them, values of names that meet joined in order} */
    private static Map<String, List<String>> phpNames(Map<String, List<String>> reading) {
        boolean same = true;
        for (String k : reading.keySet()) {
            same &= phpName(k).equals(k);
        }
        if (same) {
            return reading;
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        reading.forEach((k, v) -> out.computeIfAbsent(phpName(k), x -> new ArrayList<>()).addAll(v));
        return out;
    }

    /**
     * {@return whether an allow rule's constraint holds in every reading}: each has the key, and every value matches
     *
     * @param key the rule's key, as written
     * @param matcher the rule's value matcher
     */
    boolean allows(String key, ValueMatcher matcher) {
        return everyMatches(asSent, key, matcher) && everyMatches(php, phpName(key), matcher);
    }

    /**
     * {@return whether a deny rule's constraint holds in some reading}: a value of the key matches
     *
     * @param key the rule's key, as written
     * @param matcher the rule's value matcher
     */
    boolean denies(String key, ValueMatcher matcher) {
        return anyMatches(asSent, key, matcher) || anyMatches(php, phpName(key), matcher);
    }

    /**
     * {@return whether every reading gives a key the values the reading split at {@code &} with names as sent does}
     *
     * @param key the key
     */
    boolean agrees(String key) {
        List<String> strict = asSent.get(0).getOrDefault(key, List.of());
        for (Map<String, List<String>> r : asSent) {
            if (!r.getOrDefault(key, List.of()).equals(strict)) {
                return false;
            }
        }
        for (Map<String, List<String>> r : php) {
            if (!r.getOrDefault(phpName(key), List.of()).equals(strict)) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return the values of every name {@code name} accepts, names as sent}: those of the reading split at {@code &},
     * in its order, then those the reading split at {@code ;} too adds (what its pairs holding a {@code ;} give; a
     * value both readings give counts once)
     *
     * @param name which names count, each as decoded
     */
    List<String> values(Predicate<String> name) {
        List<String> strict = new ArrayList<>();
        asSent.get(0).forEach((k, v) -> {
            if (name.test(k)) {
                strict.addAll(v);
            }
        });
        List<String> out = new ArrayList<>(strict);
        for (Map<String, List<String>> r : asSent.subList(1, asSent.size())) {
            List<String> unmatched = new ArrayList<>(strict);
            r.forEach((k, v) -> {
                if (name.test(k)) {
                    v.stream().filter(x -> !unmatched.remove(x)).forEach(out::add);
                }
            });
        }
        return out;
    }

    private static boolean everyMatches(List<Map<String, List<String>>> readings, String key, ValueMatcher m) {
        for (Map<String, List<String>> r : readings) {
            List<String> values = r.get(key);
            if (values == null || values.isEmpty() || !values.stream().allMatch(m::matches)) {
                return false;
            }
        }
        return true;
    }

    private static boolean anyMatches(List<Map<String, List<String>>> readings, String key, ValueMatcher m) {
        for (Map<String, List<String>> r : readings) {
            List<String> values = r.get(key);
            if (values != null && values.stream().anyMatch(m::matches)) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@return a decoded parameter name as PHP registers it}: leading spaces dropped, cut at the first NUL and at the
     * first {@code [}, {@code .} and space read as {@code _}. {@code " a.b[x]"} is {@code a_b}; {@code "_method\0x"}
     * is {@code _method}.
     *
     * @param name the percent-decoded name
     */
    static String phpName(String name) {
        int n = name.indexOf('\0');
        n = n < 0 ? name.length() : n;
        int i = 0;
        while (i < n && name.charAt(i) == ' ') {
            i++;
        }
        int bracket = name.indexOf('[', i);
        int end = bracket < 0 || bracket > n ? n : bracket;
        return name.substring(i, end).replace(' ', '_').replace('.', '_');
    }
}
