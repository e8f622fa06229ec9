/**
 * The {@code openshell/regex} built-in: {@link dev.openshell.builtin.regex.RegexProvider} (the SPI entry point),
 * {@link dev.openshell.builtin.regex.Catalog} (the secret formats, from {@code catalog.json}), and the scanner and
 * config parser behind
 * them. Not exported; operator documentation is {@code docs/builtin-regex.md}.
 */
package dev.openshell.builtin.regex;
