/**
 * The {@code openshell/regex} built-in middleware (RFC 0009, "Policy integration": "a best-effort example that
 * applies a fixed set of regular-expression replacements to UTF-8 bodies"). It finds the secret formats of a
 * documented catalog (and operator patterns) in request bodies and redacts them with labelled placeholders or denies
 * the request.
 *
 * <p>Exports nothing: the supervisor reaches it only through {@link java.util.ServiceLoader}.
 *
 * @provides dev.openshell.middleware.spi.MiddlewareProvider the {@code openshell/regex} binding
 */
module dev.openshell.builtin.regex {
    requires dev.openshell.middleware.spi;
    /** RE2/J: the linear-time engine of operator patterns ({@code custom_patterns}); patched with a descriptor. */
    requires re2j;

    provides dev.openshell.middleware.spi.MiddlewareProvider with dev.openshell.builtin.regex.RegexProvider;
}
