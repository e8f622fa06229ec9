package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * For any key of the seven legacy kinds written with any of its characters as an XML character reference (decimal
 * or hex, either case, leading zeros) and cut at any points into CDATA sections, plain text runs and comments, in
 * any XML media type or in text of none: deny mode denies it, and redact mode leaves a document whose parsed text
 * holds the placeholder and not the key, with its CDATA sections balanced. And the same key written with YAML
 * escapes (<code>&#92;x</code>, <code>&#92;u</code>, <code>&#92;U</code>, escaped line breaks) in a double-quoted scalar.
 */
class MarkupSplitPropertyTest {
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    @Provide
    Arbitrary<String> keys() {
        return Samples.oneLineLegacyKeys();
    }

    @Provide
    Arbitrary<String> types() {
        return Arbitraries.of("application/xml", "text/xml", "application/soap+xml", "text/html", "text/plain", "");
    }

    /** {@return the key written as markup: references, CDATA sections and comments at random points} */
    static String markup(String key, Random r) {
        StringBuilder b = new StringBuilder("<doc><v>");
        boolean cdata = false;
        for (char c : key.toCharArray()) {
            int cut = r.nextInt(6);
            if (cut == 0) {
                b.append(cdata ? "]]>" : "<![CDATA[");
                cdata = !cdata;
            } else if (cut == 1 && cdata) {
                b.append("]]><![CDATA[");
            } else if (cut == 1) {
                b.append("<!-- c -->");
            }
            if (cdata || r.nextInt(3) == 0) {
                b.append(c);
            } else {
                String digits = "0".repeat(r.nextInt(3));
                b.append(r.nextBoolean() ? "&#" + digits + (int) c + ";"
                        : String.format(r.nextBoolean() ? "&#x%s%x;" : "&#X%s%X;", digits, (int) c));
            }
        }
        return b.append(cdata ? "]]>" : "").append("</v></doc>").toString();
    }

    @Property(tries = 400)
    void aKeyInReferencesAndCdataPiecesIsAlwaysFound(@ForAll("keys") String key, @ForAll("types") String type,
                                                     @ForAll long seed) {
        String body = markup(key, new Random(seed));
        String[] headers = type.isEmpty() ? new String[0] : new String[] {"content-type", type};
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        assertEquals(Decision.DENY, DecodedBodyTest.evaluate(provider, DENY, bytes, headers).decision(), body);
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, bytes, headers);
        String out = new String(r.body().orElseThrow(() -> new AssertionError(body)).toByteArray(),
                StandardCharsets.UTF_8);
        String text = MarkupBodyTest.parsed(out);
        assertFalse(text.contains(key.substring(4)), body + " -> " + out);
        assertTrue(text.contains("[REDACTED:"), out);
        assertTrue(out.startsWith("<doc><v>") && out.endsWith("</v></doc>"), out);
    }

    /**
     * Text that runs on after the key ({@code xyz}): the parser's reading may see no key (the run is longer than the
     * format), or a longer one than the text as it is sees inside a section; whatever is redacted, every CDATA
     * section of the result is closed.
     */
    @Property(tries = 300)
    void aRedactionNeverLeavesASectionOpen(@ForAll("keys") String key, @ForAll("types") String type,
                                           @ForAll long seed) {
        Random r = new Random(seed);
        String body = markup(key, r).replace("</v></doc>", (r.nextBoolean() ? "xyz" : "<![CDATA[xyz]]>")
                + "</v></doc>");
        String[] headers = type.isEmpty() ? new String[0] : new String[] {"content-type", type};
        HttpRequestResult res = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT,
                body.getBytes(StandardCharsets.UTF_8), headers);
        res.body().ifPresent(b -> MarkupBodyTest.parsed(new String(b.toByteArray(), StandardCharsets.UTF_8)));
    }

    /** Markup an HTML tokenizer reads as a comment or a bogus comment (WHATWG HTML, "Tokenization"). */
    private static final String[] HTML_SPLITTERS = {"<!x>", "<? x >", "</ x>", "</>", "<![CDATA[ ]]>", "<!---->",
        "<!-- a --!>", "<!-->", "<!--->", "<!DOCTYPE x>", "<!-- - -- -->"};

    /** An HTML tokenizer's text: comments and bogus comments dropped (an independent reading by regular expression). */
    static String htmlText(String html) {
        return html.replaceAll("<!--(?:>|->|[\\s\\S]*?--!?>)|<![^>]*>|<\\?[^>]*>|</(?:>|[^A-Za-z>][^>]*>)", "");
    }

    /**
     * A key cut at random points by comments and bogus comments in {@code text/html} is denied, and redacted so that
     * the text an HTML tokenizer reads holds the placeholder and not the key.
     */
    @Property(tries = 300)
    void aKeyCutByHtmlBogusCommentsIsAlwaysFound(@ForAll("keys") String key, @ForAll long seed) {
        Random r = new Random(seed);
        StringBuilder b = new StringBuilder("<p>");
        for (char c : key.toCharArray()) {
            if (r.nextInt(4) == 0) {
                b.append(HTML_SPLITTERS[r.nextInt(HTML_SPLITTERS.length)]);
            }
            b.append(c);
        }
        String body = b.append("</p>").toString();
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String[] headers = {"content-type", "text/html; charset=utf-8"};
        assertEquals(Decision.DENY, DecodedBodyTest.evaluate(provider, DENY, bytes, headers).decision(), body);
        HttpRequestResult res = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, bytes, headers);
        String out = new String(res.body().orElseThrow(() -> new AssertionError(body)).toByteArray(),
                StandardCharsets.UTF_8);
        String text = htmlText(out);
        assertFalse(text.contains(key.substring(4)), body + " -> " + out);
        assertTrue(text.contains("[REDACTED:"), body + " -> " + out);
    }

    @Property(tries = 300)
    void aKeyInYamlEscapesIsAlwaysFound(@ForAll("keys") String key, @ForAll long seed) {
        Random r = new Random(seed);
        StringBuilder b = new StringBuilder("name: x\nkey: \"");
        for (char c : key.toCharArray()) {
            if (r.nextInt(5) == 0) {
                b.append("\\\n").append(" ".repeat(r.nextInt(4)));
            }
            switch (r.nextInt(4)) {
                case 0 -> b.append(String.format("\\x%02x", (int) c));
                case 1 -> b.append(String.format("\\u%04X", (int) c));
                case 2 -> b.append(String.format("\\U%08x", (int) c));
                default -> b.append(c);
            }
        }
        String body = b.append("\"\n").toString();
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        String[] headers = {"content-type", "application/yaml"};
        assertEquals(Decision.DENY, DecodedBodyTest.evaluate(provider, DENY, bytes, headers).decision(), body);
        HttpRequestResult res = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, bytes, headers);
        String out = new String(res.body().orElseThrow(() -> new AssertionError(body)).toByteArray(),
                StandardCharsets.UTF_8);
        assertTrue(out.startsWith("name: x\nkey: \"[REDACTED:") && out.endsWith("]\"\n"), body + " -> " + out);
    }
}
