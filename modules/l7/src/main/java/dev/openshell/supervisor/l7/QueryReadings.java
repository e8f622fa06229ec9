package dev.openshell.supervisor.l7;

/**
 * How L7 policy reads a query string and form parameter names: as the most liberal web framework reads them
 * ({@code docs/policy-reference.md}, "Query readings" and "Method override"). One home for the rule, used by the
 * {@code _method} check and by the {@code query} constraints of REST rules.
 *
 * <p>Names: PHP ({@code php_register_variable_ex}) drops leading spaces, cuts a name at a NUL (it walks the name as a C
 * string), reads {@code .} and space as {@code _}, and starts an array at {@code [} ({@code q[]=x} is {@code q}).
 */
final class QueryReadings {
    private QueryReadings() {
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
