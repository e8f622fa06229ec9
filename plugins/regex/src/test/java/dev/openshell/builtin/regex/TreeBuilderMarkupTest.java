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
 * A key split by markup that an HTML tree builder reads through (attacker passes 23 and 24, P29-2, P29-4, P30-3):
 * start tags it ignores where they stand, tags around which it moves text before a table (foster parenting), and
 * SVG or MathML content, where CDATA sections are sections and no element holds raw text. Every body below reads as
 * the whole key to html5lib (1.1: the text nodes joined, comments left out, as DOM {@code textContent} does); each is
 * denied and redacted. {@code K1} and {@code K2} stand for the key's two halves.
 */
class TreeBuilderMarkupTest {
    private static final String K1 = "sk-proj-Ab3dE6gH9jK2";
    private static final String K2 = "mN5pQ8sT1vW4yZ7cF0iL";
    private static final JsonObject DENY = Json.createObjectBuilder().add("mode", "deny").build();
    private final RegexProvider provider = new RegexProvider();

    private HttpRequestResult run(JsonObject config, String body) {
        return DecodedBodyTest.evaluate(provider, config, body.getBytes(StandardCharsets.UTF_8), "content-type",
                "text/html");
    }

    private static String key(String form) {
        return form.replace("K2", "\u0000").replace("K1", K1).replace("\u0000", K2);
    }

    private void deniedAndRedacted(String form) {
        String body = key(form);
        assertEquals(Decision.DENY, run(DENY, body).decision(), body);
        HttpRequestResult r = run(JsonObject.EMPTY_JSON_OBJECT, body);
        String out = new String(r.body().orElseThrow(() -> new AssertionError("nothing redacted: " + body))
                .toByteArray(), StandardCharsets.UTF_8);
        assertFalse(out.contains("Ab3dE6gH") && out.contains("yZ7cF0iL"), out);
    }

    /** P29-2: a start tag the tree builder ignores "in body" makes no element between the two halves. */
    @ParameterizedTest
    @ValueSource(strings = {"<div>K1<html>K2</div>", "<div>K1<body>K2</div>", "<div>K1<head>K2</div>",
        "<div>K1<frameset>K2</div>", "<div>K1<frame>K2</div>", "<div>K1<col>K2</div>", "<div>K1<colgroup>K2</div>",
        "<div>K1<tr>K2</div>", "<div>K1<td>K2</div>", "<div>K1<th>K2</div>", "<div>K1<caption>K2</div>",
        "<div>K1<tbody>K2</div>", "<div>K1<thead>K2</div>", "<div>K1<tfoot>K2</div>",
        "<div>K1<TR class=\"a>b\">K2</div>", "<p>K1<html lang=en>K2", "<p>K1<body onload=\"x\">K2",
        "<div>K1<html><tr>K2</div>", "<html><head></head><body><p>K1<head>K2</p></body></html>"})
    void aStartTagTheTreeBuilderIgnores(String form) {
        deniedAndRedacted(form);
    }

    /** P29-2: inside a select, the tree builder ignores every start tag but an option's. */
    @ParameterizedTest
    @ValueSource(strings = {"<select><option>K1<b>K2</option></select>", "<select><option>K1<div>K2</option></select>",
        "<select><option>K1<span class=x>K2</option></select>", "<select><option>K1<title>K2</option></select>",
        "<select><option>K1<svg>K2</option></select>", "<select><option>K1<math>K2</select>",
        "<select><option>K1<html>K2</select>"})
    void aStartTagInsideASelect(String form) {
        deniedAndRedacted(form);
    }

    /** P29-4: text a table holds outside its cells moves before the table, next to the text before it. */
    @ParameterizedTest
    @ValueSource(strings = {"<div>K1<table>K2</table></div>", "<div>K1<table>K2</div>",
        "<table><tr><td>x</td></tr>K1<tr>K2</table>", "<table>K1<tbody>K2</table>", "<td><table>K1<tr>K2</table>", "<b>x</b>K1<tr>K2", "<p><i>x</i>K1<html>K2</p>"})
    void textFosterParentedBeforeATable(String form) {
        deniedAndRedacted(form);
    }

    /** P30-3: in SVG and MathML content a CDATA section is text, and no element holds raw text. */
    @ParameterizedTest
    @ValueSource(strings = {"<svg>K1<![CDATA[K2]]></svg>", "<svg>K1<!x><![CDATA[K2]]></svg>",
        "<math><mi>K1<![CDATA[K2]]></mi></math>", "<svg><![CDATA[K1]]><![CDATA[K2]]></svg>",
        "<SVG viewBox=\"0 0 1 1\">K1<![CDATA[K2]]></SVG>", "<svg><style>K1<!--x-->K2</style></svg>",
        "<svg><title>K1<!---->K2</title></svg>", "<svg><script>K1</x>K2</script></svg>",
        "<svg><g><textarea>K1<!---->K2</textarea></g></svg>", "<svg><svg></svg>K1<![CDATA[K2]]></svg>"})
    void foreignContent(String form) {
        deniedAndRedacted(form);
    }

    /**
     * A comment right after text starts a text node of its own to a reader that walks the nodes: the key is whole in
     * it even where text run into the comment's front (the textContent reading joins {@code x} to the key's front).
     */
    @ParameterizedTest
    @ValueSource(strings = {"<p>x<!---->K1</b>K2</p>", "<p>x<!--c-->K1<tr>K2</p>", "<p>x</b><!---->K1</b>K2</p>",
        "<p>x<!x>K1</i>K2</p>", "<p>x<?pi>K1</b>K2</p>", "<div>x<!---->K1<html>K2</div>"})
    void aCommentStartsATextNode(String form) {
        deniedAndRedacted(form);
    }

    /**
     * The differential fuzz against html5lib (random tags around the halves): a noscript read with scripting disabled
     * and a tree builder together, raw-text elements a select ignores, {@code </br>} and {@code </p>} making an
     * element, breakout tags ending foreign content, a form in a table.
     */
    @ParameterizedTest
    @ValueSource(strings = {"<th><noscript><foreignObject>K1<body><head>K2</mi>",
        "<noscript/></frame></form>x<desc>K1<frame><table>K2", "<select><span><head><iframe>K1<ul></p><font>K2",
        "<!--x--></head><select>K1<xmp><mi>K2<![CDATA[", "<!--x--><select/><caption>K1<hr></noscript></textarea>K2",
        "</tfoot><path><svg>x</br>K1</th>K2<font><option>", "</foreignObject></annotation-xml><table>K1<form>K2",
        "</tfoot>x<option><math><b>K1<tbody>K2x", "<p>x</p>K1<tr>K2", "<p>x</br>K1</b>K2",
        "<select><colgroup><input>K1<body></i></select>K2", "<select>K1</span><template>K2<form>",
        "<ul>x<form>K1<form></li>K2x <head>", "<html>x<math><mtext> K1</optgroup><frame><html>K2</a>x",
        "<b/><th/><font><!--x--><select>K1</font><div/>K2<span>"})
    void fuzzedForms(String form) {
        deniedAndRedacted(form);
    }

    /**
     * Attacker pass 26: noscript with a tree builder (P32-1), table parts outside a table (P32-2), nested forms
     * (P32-3), svg in a select (P32-4), end tags a tree builder finds out of scope (P32-5), what a table holds outside
     * its cells (P32-6), raw-text elements a select ignores (P32-9).
     */
    @ParameterizedTest
    @ValueSource(strings = {"<noscript><table>K1<tr>K2</noscript>", "<noscript><select><option>K1<b>K2</noscript>",
        "<noscript>K1<body>K2</noscript>", "<noscript><div>K1<table>K2</noscript>", "<td>K1</td><td>K2</td>",
        "<tr>K1<td></tr>K2", "<form>K1<form>K2", "<table>K1<form>K2", "<select><option>K1<svg>K2",
        "<div>K1<table></div>K2", "<div><b>K1<table></b>K2", "<span><div>K1<tr></span>K2", "<b><object>K1<tr></b>K2",
        "<form><div>K1<tr></form>K2", "<pre>K1<table></pre>K2", "<button><marquee>K1</button><tr>K2",
        "<table>K1<input type=hidden>K2", "<table>K1<style></style>K2", "<table>K1<script>x</script>K2",
        "<table><tbody><tr>K1<tr></tbody>K2", "<table><table></table>K1<td>K2",
        "<select><option>K1<xmp><i>K2", "<select><option>K1<title><i>K2", "<select><option>K1<plaintext><i>K2"})
    void attackerPass26(String form) {
        deniedAndRedacted(form);
    }

    /**
     * Attacker pass 27: text right after a table's end (P33-1), a row end closing the open cell (P33-2), table end tags
     * inside SVG (P33-3), a cell end tag of the wrong kind (P33-4), a noscript after an unclosed raw-text element
     * (P33-5), a select a table end closes (P33-6), a form end inside a select (P33-7), a template in a table (P33-8:
     * one run to parse5 and browsers, two to html5lib 1.1).
     */
    @ParameterizedTest
    @ValueSource(strings = {"<table><td>x</table>K1</x>K2", "<table>x</table>K1</x>K2",
        "<table><tr><td>x</tr>K1<tr>K2", "<table><tr><td>x</tr>K1<style></style>K2",
        "<table><td><svg></table>K1<td>K2", "<table><tr><td><svg></tr>K1<tr>K2",
        "<table><tr><td>K1</th><table>K2", "<svg><title></svg><noscript>K1<tr>K2",
        "<table><tr><td><select></td></tr></table><select><option>K1<b>K2</select>",
        "<form><select></form></select>K1<form>K2", "<table>K1<template></template>K2"})
    void attackerPass27(String form) {
        deniedAndRedacted(form);
    }

    /** What separates the halves to a tree builder too passes: cells, options, elements. */
    @ParameterizedTest
    @ValueSource(strings = {"<table><tr><td>K1</td><td>K2</td></tr></table>", "<table><tr><td>K1<td>K2</table>",
        "<table><tr><th>K1<th>K2</table>", "<html><head><title>x</title></head><body><p>K1<p>K2</body></html>",
        "<select><option>K1<option>K2</select>", "<svg><text>K1</text><text>K2</text></svg>",
        "<table><tr><td>K1<tr>K2", "<table><caption>K1<tr>K2", "<table><tr><th>K1<tbody>K2",
        "<table><tr><td>K1<col>K2"})
    void whatATreeBuilderSeparatesPasses(String form) {
        assertEquals(Decision.ALLOW, run(DENY, key(form)).decision(), key(form));
    }
}
