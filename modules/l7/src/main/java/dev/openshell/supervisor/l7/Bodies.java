package dev.openshell.supervisor.l7;

import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import jakarta.json.Json;
import jakarta.json.JsonConfig;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonReaderFactory;
import jakarta.json.JsonValue;
import jakarta.json.stream.JsonParser;
import jakarta.json.stream.JsonParserFactory;

/**
 * Strict decoding of request bodies for policy ({@code docs/policy-reference.md}, "L7 policy", "JSON bodies"): UTF-8
 * without replacement, and JSON read as exactly one value with nothing but whitespace after it (a second message after
 * the first is never left for the upstream to read unchecked), at most {@value #MAX_DEPTH} levels of nesting, numbers
 * of at most {@value #MAX_NUMBER_CHARS} characters, and no key twice in an object (two readers of one body must never
 * see different methods or operations). The L7 readers look their governed members up with {@link #member}, which
 * compares names folded ({@link #fold}): Go's {@code encoding/json} and ASP.NET Core match member names to fields
 * without regard to case and keep the last match, so a member named in another case ({@code "Method"} alone) is read
 * as the member a case-insensitive server reads, and two members that fold to a governed name in one object
 * ({@code "query"} and {@code "Query"}, or {@code "params"} and {@code "param"} ending in U+017F, which folds to the
 * letter s) are a duplicate. Keys that only differ in case elsewhere (inside GraphQL {@code variables}, MCP
 * {@code arguments}, any data no rule judges) are ordinary data and never refused: no governed value is read there.
 *
 * <p>The body is read twice: a streaming pass that checks the limits and the end without building anything (so no
 * number is converted and no deep structure is built), then the tree.
 */
final class Bodies {
    /** The deepest nesting of arrays and objects read, levels. */
    static final int MAX_DEPTH = 128;
    /** The longest number read, characters (sign, digits, fraction and exponent). */
    static final int MAX_NUMBER_CHARS = 100;

    private static final JsonParserFactory PARSERS = Json.createParserFactory(Map.of());
    private static final JsonReaderFactory STRICT = Json.createReaderFactory(
            Map.of(JsonConfig.KEY_STRATEGY, JsonConfig.KeyStrategy.NONE));

    /** Why a body is not one JSON value within the limits: a fixed code and a reason without body content. */
    static final class Malformed extends Exception {
        private static final long serialVersionUID = 1L;
        private final String code;

        Malformed(String code, String reason) {
            super(reason, null, false, false);
            this.code = code;
        }

        /**
         * {@return the code: {@code json_invalid}, {@code json_trailing_data}, {@code json_too_deep},
         * {@code json_number_too_long} or {@code json_duplicate_key}}
         */
        String code() {
            return code;
        }
    }

    private Bodies() {
    }

    static Optional<String> utf8(byte[] body) {
        return utf8(ByteBuffer.wrap(body));
    }

    /** {@return the bytes from the position to the limit as UTF-8 text, or empty when they are not} (moves it) */
    static Optional<String> utf8(ByteBuffer body) {
        try {
            return Optional.of(StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(body).toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    /**
     * {@return the one JSON value of {@code text}}
     *
     * @param text the body
     * @throws Malformed if it is not exactly one JSON value within the limits
     */
    static JsonValue json(String text) throws Malformed {
        check(text);
        try (JsonReader r = STRICT.createReader(new StringReader(text))) {
            return r.readValue();
        } catch (RuntimeException e) {
            // the syntax and the limits were checked: what the tree refuses is a duplicate key
            throw new Malformed("json_duplicate_key", "a JSON object has a duplicate key");
        }
    }

    /**
     * {@return the member of {@code o} named {@code name} as a case-insensitive reader names it}: the one member whose
     * key folds ({@link #fold}) to the text {@code name} folds to, else null.
     *
     * @param o an object read by {@link #json}
     * @param name the governed member name (ASCII)
     * @throws Malformed ({@code json_duplicate_key}) if two members of {@code o} fold to it: a case-insensitive
     *     reader could take either value
     */
    static JsonValue member(JsonObject o, String name) throws Malformed {
        String folded = fold(name);
        JsonValue found = null;
        for (Map.Entry<String, JsonValue> m : o.entrySet()) {
            if (fold(m.getKey()).equals(folded)) {
                if (found != null) {
                    throw new Malformed("json_duplicate_key", "a JSON object has two members named " + name
                            + " (names are compared without regard to case)");
                }
                found = m.getValue();
            }
        }
        return found;
    }

    /**
     * {@return {@code name} folded for comparison without regard to case}: every code point mapped to the upper case
     * of its lower case ({@link Character#toLowerCase(int)}, {@link Character#toUpperCase(int)}: Unicode simple case
     * mappings). Two names equal under Go's {@code encoding/json} folding (each rune to the smallest rune of its
     * {@code unicode.SimpleFold} orbit, so {@code U+017F} reads as the letter s and {@code U+212A} KELVIN SIGN as
     * the letter k) fold to the same text here (checked for every code point in {@code CaseFoldedKeysTest}); a few
     * more do ({@code U+0130} and {@code U+0131} fold to the letter I), which refuses or judges more, never less.
     */
    static String fold(String name) {
        int i = 0;
        while (i < name.length() && name.charAt(i) < 0x80 && !(name.charAt(i) >= 'a' && name.charAt(i) <= 'z')) {
            i++;
        }
        if (i == name.length()) {
            return name; // nothing to fold: the common case of an upper-case or symbol-only key
        }
        StringBuilder b = new StringBuilder(name.length());
        name.codePoints().forEach(cp -> b.appendCodePoint(foldCodePoint(cp)));
        return b.toString();
    }

    private static int foldCodePoint(int cp) {
        if (cp < 0x80) {
            return cp >= 'a' && cp <= 'z' ? cp - ('a' - 'A') : cp;
        }
        return Character.toUpperCase(Character.toLowerCase(cp));
    }

    /** The streaming pass: one value, its depth and its numbers, no key twice in an object, then only whitespace. */
    private static void check(String text) throws Malformed {
        int depth = 0;
        boolean complete = false;
        ArrayDeque<Set<String>> keys = new ArrayDeque<>(); // the keys of each open object
        try (JsonParser p = PARSERS.createParser(new StringReader(text))) {
            while (p.hasNext()) {
                JsonParser.Event event = p.next();
                switch (event) {
                    case START_ARRAY, START_OBJECT -> {
                        if (++depth > MAX_DEPTH) {
                            throw new Malformed("json_too_deep", "the JSON body nests deeper than " + MAX_DEPTH
                                    + " levels");
                        }
                        keys.push(event == JsonParser.Event.START_OBJECT ? new HashSet<>() : Set.of());
                    }
                    case END_ARRAY, END_OBJECT -> {
                        depth--;
                        keys.pop();
                    }
                    case KEY_NAME -> {
                        if (!keys.peek().add(p.getString())) {
                            throw new Malformed("json_duplicate_key", "a JSON object has a duplicate key");
                        }
                    }
                    case VALUE_NUMBER -> {
                        if (p.getString().length() > MAX_NUMBER_CHARS) {
                            throw new Malformed("json_number_too_long", "a JSON number is longer than "
                                    + MAX_NUMBER_CHARS + " characters");
                        }
                    }
                    default -> {
                        // keys, strings and literals: nothing to bound beyond the body's own limit
                    }
                }
                complete = depth == 0;
            }
        } catch (RuntimeException e) {
            throw complete
                    ? new Malformed("json_trailing_data", "the body holds more than one JSON value (only whitespace"
                            + " may follow the first)")
                    : new Malformed("json_invalid", "invalid JSON");
        }
        if (!complete) {
            throw new Malformed("json_invalid", "invalid JSON");
        }
    }
}
