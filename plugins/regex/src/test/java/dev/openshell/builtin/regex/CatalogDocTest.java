package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/builtin-regex.md} lists every catalog entry: the part between {@value #BEGIN} and {@value #END} is
 * generated from {@code catalog.json}, and this test fails when the two differ. To regenerate it after changing the
 * catalog:
 * <pre>
 * ./dev.sh mvn -q -pl plugins/regex -am test -Dtest=CatalogDocTest -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dcatalog.doc.write=true
 * </pre>
 */
class CatalogDocTest {
    static final String BEGIN = "<!-- BEGIN GENERATED CATALOG (CatalogDocTest; do not edit by hand) -->";
    static final String END = "<!-- END GENERATED CATALOG -->";

    @Test
    void theDocumentListsEveryEntryOfTheCatalog() throws IOException {
        Path doc = repositoryRoot().resolve("docs/builtin-regex.md");
        String text = Files.readString(doc, StandardCharsets.UTF_8);
        int b = text.indexOf(BEGIN);
        int e = text.indexOf(END);
        assertTrue(b >= 0 && e > b, "docs/builtin-regex.md must hold the generated catalog markers");
        String expected = text.substring(0, b + BEGIN.length()) + "\n" + generate(Catalog.get()) + text.substring(e);
        if (Boolean.getBoolean("catalog.doc.write")) {
            Files.writeString(doc, expected, StandardCharsets.UTF_8);
            return;
        }
        assertEquals(expected, text, "docs/builtin-regex.md differs from catalog.json; regenerate it with: "
                + "./dev.sh mvn -q -pl plugins/regex -am test -Dtest=CatalogDocTest "
                + "-Dsurefire.failIfNoSpecifiedTests=false -Dcatalog.doc.write=true");
    }

    private static Path repositoryRoot() {
        Path p = Path.of("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("docs/builtin-regex.md"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("docs/builtin-regex.md not found above " + Path.of("").toAbsolutePath());
        }
        return p;
    }

    /** {@return the generated part: a count, then one table row per entry in catalog order} */
    static String generate(Catalog catalog) {
        List<Rule> rules = catalog.rules();
        long byDefault = rules.stream().filter(Rule::enabledByDefault).count();
        StringBuilder b = new StringBuilder();
        b.append("\n").append(rules.size()).append(" entries from ").append(catalog.providers().size())
                .append(" providers; ").append(byDefault).append(" are looked for by default, the other ")
                .append(rules.size() - byDefault).append(" only when `patterns` names them. In catalog order, ")
                .append("which is the order of precedence at one position.\n\n");
        b.append("| name | label | provider | matches | deliberately not matched | source |\n");
        b.append("|---|---|---|---|---|---|\n");
        for (Rule r : rules) {
            b.append("| `").append(r.id()).append("`").append(r.enabledByDefault() ? "" : " (opt-in)")
                    .append(" | ").append(cell(r.label()))
                    .append(" | `").append(r.provider()).append("`")
                    .append(" | ").append(cell(matches(r)))
                    .append(" | ").append(cell(r.notMatched()))
                    .append(" | ").append(cell(sources(r.source()))).append(" |\n");
        }
        return b.append("\n").toString();
    }

    private static String matches(Rule r) {
        return switch (r.kind()) {
            case PEM -> "`-----BEGIN <label> PRIVATE KEY-----` (or `PRIVATE KEY BLOCK`) through its END line, or "
                    + "through the end of the key data";
            case PREFIX -> r.forms().stream().map(f -> prefixForm(f)).collect(Collectors.joining("; or "))
                    + (r.entropy() > 0 ? String.format(Locale.ROOT, "; entropy at least %.2f bits per character",
                            r.entropy()) : "")
                    + (r.checksum() != null ? "; a valid CRC-32 checksum (last 6 characters, base 62) gives "
                            + "confidence `high`" : "");
            case KEYWORD -> r.forms().stream().map(f -> "a key holding " + literals(f.literals(), " or ")
                    + ", assigned `" + code(f.shape().toString()) + "`").collect(Collectors.joining("; or "))
                    + String.format(Locale.ROOT, "; entropy at least %.2f bits per character", r.entropy());
        };
    }

    private static String prefixForm(Rule.Form f) {
        String lead = f.lead() == null ? "" : "`" + code(f.lead().toString()) + "` then ";
        String shape = f.shape() == null ? "" : " then `" + code(f.shape().toString()) + "`";
        return lead + literals(f.literals(), ", ") + shape;
    }

    private static String literals(List<String> literals, String separator) {
        if (literals.size() > 8) {
            return "`" + code(literals.getFirst()) + "` ... `" + code(literals.getLast()) + "` (" + literals.size()
                    + " prefixes)";
        }
        return literals.stream().map(l -> "`" + code(l) + "`").collect(Collectors.joining(separator));
    }

    private static String sources(String source) {
        return java.util.Arrays.stream(source.split("; ")).map(s -> {
            int space = s.indexOf(' ');
            String url = space < 0 ? s : s.substring(0, space);
            String rest = space < 0 ? "" : s.substring(space);
            return "<" + url + ">" + rest;
        }).collect(Collectors.joining("; "));
    }

    /** Text inside a code span: a backtick cannot be escaped there, so it is shown as a quote. */
    private static String code(String s) {
        return s.replace("`", "'");
    }

    private static String cell(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }
}
