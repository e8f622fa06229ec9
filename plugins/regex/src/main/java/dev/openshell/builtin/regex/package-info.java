/**
 * The {@code openshell/regex} built-in: {@link dev.openshell.builtin.regex.RegexProvider} (the SPI entry point),
 * {@link dev.openshell.builtin.regex.SecretKind} (the fixed pattern set), and the scanner and config parser behind
 * them. Not exported; operator documentation is {@code docs/builtin-regex.md}.
 */
package dev.openshell.builtin.regex;
