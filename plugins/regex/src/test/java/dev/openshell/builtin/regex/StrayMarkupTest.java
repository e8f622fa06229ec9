package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Markup inside a key that readers read through (attacker pass 19): in HTML, an end tag (one that closes nothing
 * leaves the text on both sides one text node to html.parser, lxml.html, BeautifulSoup and libxml2's HTML parser:
 * P25-3); in XML, a comment opened as {@code <!-->} that libxml2's recovering parser reads on past that {@code >}
 * and drops through a character XML does not allow (P25-2); later passes' comment forms (P26-1, P27-2, P27-3). Each
 * is denied and redacted.
 */
class StrayMarkupTest {
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    private HttpRequestResult run(JsonObject config, String body, String type) {
        return DecodedBodyTest.evaluate(provider, config, body.getBytes(StandardCharsets.UTF_8), "content-type", type);
    }

    private void deniedAndRedacted(String body, String type) {
        assertEquals(Decision.DENY, run(DENY, body, type).decision(), type + " " + body);
        HttpRequestResult r = run(JsonObject.EMPTY_JSON_OBJECT, body, type);
        String out = new String(r.body().orElseThrow(() -> new AssertionError("nothing redacted: " + body))
                .toByteArray(), StandardCharsets.UTF_8);
        assertFalse(out.contains("Ab3dE6gH") && out.contains("yZ7cF0iL"), out);
    }

    @ParameterizedTest
    @ValueSource(strings = {"</b>", "</x>", "</div>", "</br>", "</x-->", "</b >", "</b x=\">\">", "</B>"})
    void anEndTagInsideAKeyInHtml(String tag) {
        deniedAndRedacted("<p>sk-proj-Ab3dE6gH9jK2" + tag + "mN5pQ8sT1vW4yZ7cF0iL</p>", "text/html");
    }

    /** Pass 20, P26-1: Python's html.parser (to 3.12) and libxml2's HTML parser end a comment after "<!--". */
    @ParameterizedTest
    @ValueSource(strings = {"<!-->-->", "<!--->-->", "<!-->x-->", "<!-->\n-->", "<!-->a<b>-->", "<!--><p>-->",
        "<!-- x -- >"})
    void aCommentOpenedAsHtmlClosesItButOlderReadersDoNotInsideAKeyInHtml(String comment) {
        deniedAndRedacted("<p>sk-proj-Ab3dE6gH9jK2" + comment + "mN5pQ8sT1vW4yZ7cF0iL</p>", "text/html");
    }

    @ParameterizedTest
    @ValueSource(strings = {"<!-->-\u0001", "<!-->>\u0001", "<!-->#\u0000", "<!-->\u0080\u0000", "<!--> x \u0001"})
    void aCommentOpenedAsHtmlClosesItInsideAKeyInXml(String broken) {
        deniedAndRedacted("<r>sk-proj-Ab3dE6gH9jK2" + broken + "mN5pQ8sT1vW4yZ7cF0iL</r>", "application/xml");
    }

    /** Pass 21, P27-3: libxml2's XML parser reads a comment's dashes in pairs, so "--->" does not end it. */
    @ParameterizedTest
    @ValueSource(strings = {"<!--x--->-->", "<!----->-->", "<!--x--->x-->", "<!--a-b----->-->", "<!--a--b--->-->"})
    void aCommentEndedByAnOddRunOfDashesRunsOnInsideAKeyInXml(String comment) {
        for (String type : new String[] {"application/xml", "text/xml", "application/xhtml+xml"}) {
            deniedAndRedacted("<r><v>sk-proj-Ab3dE6gH9jK2" + comment + "mN5pQ8sT1vW4yZ7cF0iL</v></r>", type);
        }
        deniedAndRedacted("&#32;sk-proj-Ab3dE6gH9jK2" + comment + "mN5pQ8sT1vW4yZ7cF0iL", "text/plain");
    }

    /**
     * Pass 21, P27-2: text of no markup type read as markup (it holds a CDATA section or {@code &#}) is read by HTML
     * readers too: Python's html.parser drops {@code <![CDATA[x]]>} and ends {@code <!-->} at the next {@code -->}.
     */
    @ParameterizedTest
    @ValueSource(strings = {"<![CDATA[x]]>sk-proj-Ab3dE6gH9jK2<!-->-->mN5pQ8sT1vW4yZ7cF0iL",
        "<![CDATA[ab]]>sk-proj-Ab3dE6gH9jK2<!--->x-->mN5pQ8sT1vW4yZ7cF0iL",
        "<![CDATA[x]]>sk-proj-Ab3dE6gH9jK2<!-->\n-->mN5pQ8sT1vW4yZ7cF0iL",
        "&#32;sk-proj-Ab3dE6gH9jK2<!-->-->mN5pQ8sT1vW4yZ7cF0iL"})
    void htmlCommentFormsInTextOfNoMarkupTypeReadAsMarkup(String body) {
        for (String type : new String[] {"text/plain", "application/octet-stream"}) {
            deniedAndRedacted(body.replace("\\n", "\n"), type);
        }
    }

    /**
     * Pass 22: an end tag inside an element whose text only WHATWG reads as raw text (P28-2); a lone {@code </} or
     * {@code <?} before a character that starts no name, which libxml2's HTML parser drops alone (P28-3); a marked
     * section holding {@code >}, which Python's html.parser ends at {@code ]>} or {@code ]]>} (P28-4); a {@code =}
     * where an attribute name starts, then a quote: a name to every reader, no quoted value (P28-5).
     */
    @ParameterizedTest
    @ValueSource(strings = {"<noscript>sk-proj-Ab3dE6gH9jK2</p>mN5pQ8sT1vW4yZ7cF0iL</noscript>",
        "<textarea>sk-proj-Ab3dE6gH9jK2</p>mN5pQ8sT1vW4yZ7cF0iL</textarea>",
        "<title>sk-proj-Ab3dE6gH9jK2</b>mN5pQ8sT1vW4yZ7cF0iL</title>",
        "<xmp>sk-proj-Ab3dE6gH9jK2</p>mN5pQ8sT1vW4yZ7cF0iL</xmp>",
        "<style>sk-proj-Ab3dE6gH9jK2</p>mN5pQ8sT1vW4yZ7cF0iL</style>",
        "<script>sk-proj-Ab3dE6gH9jK2</b>mN5pQ8sT1vW4yZ7cF0iL</script>",
        "<p>sk-proj-Ab3dE6gH9jK2</6mN5pQ8sT1vW4yZ7cF0iL</p>", "<p>sk-proj-Ab3dE6gH9jK2<?6mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2</-mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2<![if x>]>mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2<![CDATA[>]]>mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2<![cdata[a>b]]>mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2</p =\">mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2</p a=\">mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<b =\">sk-proj-Ab3dE6gH9jK2<?x>mN5pQ8sT1vW4yZ7cF0iL</b>"})
    void markupThatSomeHtmlReaderReadsThroughInsideAKey(String body) {
        deniedAndRedacted(body, "text/html");
        deniedAndRedacted("&#32;" + body, "text/plain");
    }

    /**
     * Pass 23: bogus comments inside an element only WHATWG reads as raw text (P29-1: Python's reading, built for every
     * HTML body); an end tag's attributes read after its name (P29-3); libxml2's HTML comment end {@code --!>} (P29-7);
     * a {@code <?} whose name runs to the end (P29-6). Pass 24: a {@code noscript} read with scripting disabled
     * (P30-1, P30-2).
     */
    @ParameterizedTest
    @ValueSource(strings = {"<textarea>sk-proj-Ab3dE6gH9jK2</>mN5pQ8sT1vW4yZ7cF0iL</textarea>",
        "<title>sk-proj-Ab3dE6gH9jK2</1>mN5pQ8sT1vW4yZ7cF0iL</title>",
        "<xmp>sk-proj-Ab3dE6gH9jK2<?>mN5pQ8sT1vW4yZ7cF0iL</xmp>",
        "<noscript>sk-proj-Ab3dE6gH9jK2</ x>mN5pQ8sT1vW4yZ7cF0iL</noscript>",
        "<p>sk-proj-Ab3dE6gH9jK2</b = a=\">\">mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2<!--->--!>mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2<!-->x--!>mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>sk-proj-Ab3dE6gH9jK2<?mN5pQ8sT1vW4yZ7cF0iL",
        "<noscript>sk-proj-Ab3dE6gH9jK2<!--></b>mN5pQ8sT1vW4yZ7cF0iL</noscript>",
        "<body><div><noscript>sk-proj-Ab3dE6gH9jK2</b><!--->mN5pQ8sT1vW4yZ7cF0iL</noscript></div>",
        "<noscript>sk-proj-Ab3dE6gH9jK2</b a=\">\">mN5pQ8sT1vW4yZ7cF0iL</noscript>"})
    void moreMarkupThatSomeHtmlReaderReadsThroughInsideAKey(String body) {
        deniedAndRedacted(body, "text/html");
        deniedAndRedacted("&#32;" + body, "text/plain");
    }

    /** Pass 23, P29-5: libxml2's recovering XML parser drops a named reference without its semicolon. */
    @ParameterizedTest
    @ValueSource(strings = {"&a&b;", "&nbsp&#x;", "&nbsp&amp;", "&a<![CDATA[]]>", "&a.b&c;"})
    void aBrokenNamedReferenceInsideAKeyInXml(String refs) {
        for (String type : new String[] {"application/xml", "text/xml"}) {
            deniedAndRedacted("<r>sk-proj-Ab3dE6gH9jK2" + refs + "mN5pQ8sT1vW4yZ7cF0iL</r>", type);
        }
        deniedAndRedacted("&#32;sk-proj-Ab3dE6gH9jK2" + refs + "mN5pQ8sT1vW4yZ7cF0iL", "text/plain");
    }

    @ParameterizedTest
    @ValueSource(strings = {"<p>sk-proj-Ab3dE6gH9jK2</b> and then mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<p>xsk-proj-Ab3dE6gH9jK2</b>mN5pQ8sT1vW4yZ7cF0iL</p>", "<p>a</b>b</i>c</p>"})
    void nearMissesStayUntouched(String body) {
        assertEquals(Decision.ALLOW, run(DENY, body, "text/html").decision(), body);
    }

    /**
     * Pass 25, P31-1: XHTML is read by HTML readers too (html.parser, lxml.html, BeautifulSoup and html5lib read each
     * of these whole), and by libxml2's recovering XML parser as before.
     */
    @ParameterizedTest
    @ValueSource(strings = {"<p>sk-proj-Ab3dE6gH9jK2</b>mN5pQ8sT1vW4yZ7cF0iL</p>",
        "<noscript>sk-proj-Ab3dE6gH9jK2<!--></b>mN5pQ8sT1vW4yZ7cF0iL</noscript>",
        "<noscript>sk-proj-Ab3dE6gH9jK2</b a=\">\">mN5pQ8sT1vW4yZ7cF0iL</noscript>",
        "<p>sk-proj-Ab3dE6gH9jK2<!--x--!>mN5pQ8sT1vW4yZ7cF0iL</p>", "<div>sk-proj-Ab3dE6gH9jK2<tr>mN5pQ8sT1vW4yZ7cF0iL</div>",
        "<r><v>sk-proj-Ab3dE6gH9jK2<!--x--->-->mN5pQ8sT1vW4yZ7cF0iL</v></r>"})
    void xhtmlReadAsHtmlAndAsXml(String body) {
        deniedAndRedacted(body, "application/xhtml+xml");
    }
}
