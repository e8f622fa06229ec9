package dev.openshell.supervisor.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One home for each rule: every main source file of the reactor ({@code modules/} and {@code plugins/}, comments
 * stripped) is scanned for a second definition of a rule that has one home. A copy fails this test with the file and
 * line, and the home to call instead.
 */
class OneHomeTest {

    private static final String SYNTAX = "modules/middleware-spi/src/main/java/dev/openshell/middleware/spi/internal/"
            + "Syntax.java";
    private static final String HEADER_TABLE = "modules/middleware-spi/src/main/java/dev/openshell/middleware/spi/"
            + "HeaderTable.java";
    private static final String GLOB = "modules/policy/src/main/java/dev/openshell/supervisor/policy/Glob.java";
    private static final String HEADER_PARAMETERS = "modules/middleware-spi/src/main/java/dev/openshell/middleware/spi/"
            + "internal/HeaderParameters.java";
    private static final String ENCODED_WORDS = "modules/middleware-spi/src/main/java/dev/openshell/middleware/spi/"
            + "internal/EncodedWords.java";
    private static final String DROPPED_SEQUENCES = "modules/middleware-spi/src/main/java/dev/openshell/middleware/"
            + "spi/internal/DroppedSequences.java";
    /**
     * Built-in plugins are built as any plugin is, against the public SPI only ({@code spi.internal} is not exported
     * to them): the generic helpers (hex digits, percent-encoding, printable text) have no home they may call, so
     * each plugin keeps its own. The protocol rules (tokens, codes, header tables, globs) still have one home.
     */
    private static final String PLUGINS = "plugins/";

    /** The protected and hop-by-hop field names: a collection literal naming two of them is a second table. */
    private static final String TABLE_NAME =
            "\"(?:connection|proxy-connection|keep-alive|te|trailer|upgrade|proxy-authorization|proxy-authenticate"
                    + "|transfer-encoding|content-length|host|cookie)\"";

    /** A rule with one home: what a copy looks like in code, and the files allowed to define it. */
    enum Rule {
        TOKEN_GRAMMAR("the RFC 9110 token grammar (Syntax.isToken / isTchar)",
                "!#\\$%&'\\*\\+", Set.of(SYNTAX)),
        CODE_GRAMMAR("the code grammar [a-z][a-z0-9_]* (Syntax.isCode / safeCode)",
                "\\[a-z\\]\\[a-z0-9_\\]", Set.of()),
        HEX_DIGIT("the hex-digit value (Syntax.hexDigit)",
                "'[aA]'\\s*\\+\\s*10|Character\\.digit\\([^,]+,\\s*16\\)", Set.of(SYNTAX, PLUGINS)),
        FIELD_VALUE_CHARACTER("the field-value character check (Syntax.isFieldValueChar)",
                "<\\s*0x20\\s*&&\\s*\\w+\\s*!=\\s*'\\\\t'|'\\\\t'\\s*&&\\s*\\(\\w+\\s*<\\s*0x20", Set.of(SYNTAX)),
        PERCENT_ENCODER("the percent-encoder (Syntax.percentEncode / appendPercentOctet)",
                "append\\('%'\\)\\s*\\.append\\(", Set.of(SYNTAX, PLUGINS)),
        PRINTABLE_TEXT("printable text for messages (Syntax.printable)",
                "0x7[fF]\\s*\\?\\s*'", Set.of(PLUGINS)),
        PROTECTED_HEADER_SET("the protected and hop-by-hop header table (HeaderTable)",
                "(?:Set|List)\\.of\\(\\s*(?:\"[^\"]*\"\\s*,\\s*)*" + TABLE_NAME + "\\s*,\\s*(?:\"[^\"]*\"\\s*,\\s*)*"
                        + TABLE_NAME, Set.of(HEADER_TABLE)),
        GLOB_ENGINE("the glob engine (Glob.path / Glob.value)",
                "\\bclass\\s+\\w*Glob\\b", Set.of(GLOB)),
        HEADER_PARAMETER_READING("the reading of RFC 2231 / RFC 8187 header parameters: the charset'language' prefix "
                + "split (HeaderParameters.prefixEnd / readings)",
                "indexOf\\(\\s*(?:'\\\\''|\"''\")|\\(byte\\)\\s*'\\\\''", Set.of(HEADER_PARAMETERS)),
        ENCODED_WORD_FINDING("finding RFC 2047 encoded words =?charset?B|Q?text?= (EncodedWords.find / decode)",
                "\"BbQq\"|'\\?'\\s*&&\\s*\\w+\\[[^\\]]+\\]\\s*==\\s*'='|indexOf\\(\\s*\"\\?=\""
                        + "|\\(byte\\)\\s*'\\?'\\s*,\\s*\\(byte\\)\\s*'='", Set.of(ENCODED_WORDS)),
        ISO_2022_SEQUENCE("the ISO 2022 / HZ sequences a decoder drops: ESC intermediates 0x20-0x2F, SO/SI, ~{ ~} ~LF "
                + "(DroppedSequences.length / first)",
                ">\\s*0x2[fF]\\b|'\\{'\\s*\\|\\|\\s*\\w+\\s*==\\s*'\\}'|0x1[bB]1[bB]1[bB]1[bB]"
                        + "|==\\s*0x0[eE]\\s*\\|\\|\\s*\\w+\\s*==\\s*0x0[fF]", Set.of(DROPPED_SEQUENCES)),
        ISO_2022_CONSTANT("a constant of DroppedSequences copied under another name: callers use "
                + "DroppedSequences.MAX_SEQUENCE / MAX_INTERMEDIATES directly",
                "\\bstatic\\s+final\\s+\\w+\\s+\\w+\\s*=\\s*(?:[\\w.]+\\.)?DroppedSequences\\.[A-Z_]+\\s*;",
                Set.of());

        final String what;
        final Pattern copy;
        final Set<String> homes;

        Rule(String what, String copy, Set<String> homes) {
            this.what = what;
            this.copy = Pattern.compile(copy, Pattern.DOTALL);
            this.homes = homes;
        }
    }

    private static final Pattern BLOCK_COMMENT = Pattern.compile("/\\*.*?\\*/", Pattern.DOTALL);
    private static final Pattern LINE_COMMENT = Pattern.compile("(?m)^\\s*//.*$");

    private static Path root;
    private static List<Path> sources;

    @BeforeAll
    static void scan() throws IOException {
        root = Path.of(System.getProperty("supervisor.root", "../..")).toAbsolutePath().normalize();
        sources = new ArrayList<>();
        for (String top : List.of("modules", "plugins")) {
            try (Stream<Path> walk = Files.walk(root.resolve(top))) {
                walk.filter(p -> p.toString().endsWith(".java"))
                        .filter(p -> root.relativize(p).toString().replace('\\', '/').contains("/src/main/java/"))
                        .forEach(sources::add);
            }
        }
        assertFalse(sources.size() < 100, "the scan found only " + sources.size() + " main sources under " + root);
    }

    @ParameterizedTest
    @EnumSource(Rule.class)
    void hasOneHome(Rule rule) {
        List<String> copies = new ArrayList<>();
        for (Path file : sources) {
            String rel = root.relativize(file).toString().replace('\\', '/');
            if (rule.homes.contains(rel) || rule.homes.contains(PLUGINS) && rel.startsWith(PLUGINS)) {
                continue;
            }
            String code = stripComments(read(file));
            Matcher m = rule.copy.matcher(code);
            while (m.find()) {
                copies.add(rel + ":" + line(code, m.start()));
            }
        }
        assertEquals(List.of(), copies, "a second definition of " + rule.what + "; call the home instead");
    }

    /** Comments are replaced by as many newlines as they held, so line numbers stay right. */
    static String stripComments(String source) {
        StringBuilder out = new StringBuilder();
        Matcher m = BLOCK_COMMENT.matcher(source);
        int last = 0;
        while (m.find()) {
            out.append(source, last, m.start());
            m.group().chars().filter(c -> c == '\n').forEach(c -> out.append('\n'));
            last = m.end();
        }
        out.append(source.substring(last));
        return LINE_COMMENT.matcher(out).replaceAll("");
    }

    private static int line(String text, int offset) {
        int n = 1;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                n++;
            }
        }
        return n;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
