package dev.openshell.examples.privacyguard;

import jakarta.json.JsonArray;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonConfig;
import jakarta.json.JsonException;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonReader;
import jakarta.json.JsonReaderFactory;
import jakarta.json.JsonString;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;
import jakarta.json.JsonWriter;
import jakarta.json.spi.JsonProvider;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Inspects (and, per {@link PrivacyGuardConfig}, rewrites) a chat request body.
 *
 * <h2>Formats</h2>
 * <ul>
 *   <li>OpenAI chat completions: {@code messages[].content} is a string or an array of parts; parts of type
 *       {@code text} carry {@code text}, parts of type {@code image_url} (and {@code input_image}) carry an image URL
 *       or a base64 {@code data:} URL.</li>
 *   <li>Anthropic messages: top-level {@code system} (a string or text blocks) and {@code messages[].content} (a string
 *       or blocks); blocks of type {@code image} carry a base64 or URL source; {@code tool_result} blocks nest
 *       content.</li>
 * </ul>
 * Every text (message strings, {@code text} parts and blocks, {@code system}) is scanned for e-mail addresses and
 * phone numbers ({@link PiiScanner}) and for inline base64 image data URLs ({@code data:image/...;base64,...}).
 * An image part or block is replaced, when redacting, by a text part {@code {"type":"text","text":"image upload is
 * disabled for this model"}}; an inline data URL by the same sentence.
 *
 * <h2>What is not inspected</h2>
 * An empty body; a body that is not JSON (passed untouched, reported); JSON with duplicate object keys (reported: a
 * parser that keeps the first value could see other content than this one); JSON without {@code messages} or
 * {@code system} (reported as unrecognized).
 */
final class ChatInspector {
    static final String IMAGE_PLACEHOLDER = "image upload is disabled for this model";

    private static final Pattern DATA_URL = Pattern.compile(
            "data:image/[A-Za-z0-9.+\\-]{1,64}+;base64,[A-Za-z0-9+/=]++");
    /** Looked up once: {@code Json.createX} would consult the service loader on every call. */
    private static final JsonProvider JSON = JsonProvider.provider();
    private static final JsonReaderFactory STRICT = JSON.createReaderFactory(
            Map.of(JsonConfig.KEY_STRATEGY, JsonConfig.KeyStrategy.NONE));
    private static final JsonReaderFactory LENIENT = JSON.createReaderFactory(Map.of());

    /** What the body was. */
    enum Kind {
        /** No bytes. */
        EMPTY,
        /** Not JSON (or not UTF-8/16/32 JSON text). */
        NOT_JSON,
        /** JSON in which an object repeats a key. */
        DUPLICATE_KEYS,
        /** JSON, but neither {@code messages} nor {@code system} at the top level. */
        UNRECOGNIZED,
        /** A chat request that was inspected. */
        CHAT
    }

    /**
     * The outcome.
     *
     * @param kind what the body was
     * @param rewritten the new body when something was redacted, else {@code null}
     * @param emails e-mail addresses found
     * @param phones phone numbers found
     * @param images images found (parts, blocks and inline data URLs)
     * @param text whether any non-blank text was found
     */
    record Inspection(Kind kind, byte[] rewritten, int emails, int phones, int images, boolean text) {
    }

    private final PrivacyGuardConfig config;
    private int emails;
    private int phones;
    private int images;
    private boolean text;
    private boolean changed;

    private ChatInspector(PrivacyGuardConfig config) {
        this.config = config;
    }

    static Inspection inspect(byte[] body, PrivacyGuardConfig config) {
        if (body.length == 0) {
            return new Inspection(Kind.EMPTY, null, 0, 0, 0, false);
        }
        JsonStructure root;
        try (JsonReader r = STRICT.createReader(new ByteArrayInputStream(body))) {
            root = r.read();
        } catch (JsonException | IllegalStateException e) {
            return new Inspection(parses(body) ? Kind.DUPLICATE_KEYS : Kind.NOT_JSON, null, 0, 0, 0, false);
        }
        if (!(root instanceof JsonObject o) || !(o.containsKey("messages") || o.containsKey("system"))) {
            return new Inspection(Kind.UNRECOGNIZED, null, 0, 0, 0, false);
        }
        ChatInspector w = new ChatInspector(config);
        JsonObject out = w.root(o);
        byte[] rewritten = null;
        if (w.changed) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(body.length);
            try (JsonWriter writer = JSON.createWriter(bytes)) {
                writer.writeObject(out);
            }
            rewritten = bytes.toByteArray();
        }
        return new Inspection(Kind.CHAT, rewritten, w.emails, w.phones, w.images, w.text);
    }

    private static boolean parses(byte[] body) {
        try (JsonReader r = LENIENT.createReader(new ByteArrayInputStream(body))) {
            r.read();
            return true;
        } catch (JsonException | IllegalStateException e) {
            return false;
        }
    }

    private JsonObject root(JsonObject o) {
        JsonObjectBuilder b = JSON.createObjectBuilder(o);
        if (o.get("system") != null) {
            b.add("system", content(o.get("system")));
        }
        if (o.get("messages") instanceof JsonArray messages) {
            JsonArrayBuilder list = JSON.createArrayBuilder();
            for (JsonValue m : messages) {
                if (m instanceof JsonObject message && message.containsKey("content")) {
                    list.add(JSON.createObjectBuilder(message).add("content", content(message.get("content"))));
                } else {
                    list.add(m);
                }
            }
            b.add("messages", list);
        }
        return b.build();
    }

    /** A content value: a string, or an array of parts or blocks. */
    private JsonValue content(JsonValue c) {
        if (c instanceof JsonString s) {
            return text(s);
        }
        if (c instanceof JsonArray parts) {
            JsonArrayBuilder b = JSON.createArrayBuilder();
            for (JsonValue p : parts) {
                b.add(part(p));
            }
            return b.build();
        }
        return c;
    }

    private JsonValue part(JsonValue p) {
        if (p instanceof JsonString s) {
            return text(s);
        }
        if (!(p instanceof JsonObject o) || !(o.get("type") instanceof JsonString type)) {
            return p;
        }
        return switch (type.getString()) {
            case "text" -> o.get("text") instanceof JsonString t
                    ? JSON.createObjectBuilder(o).add("text", text(t)).build() : o;
            case "image_url", "input_image", "image" -> {
                images++;
                if (config.images() == PrivacyGuardConfig.ImageMode.REDACT) {
                    changed = true;
                    yield JSON.createObjectBuilder().add("type", "text").add("text", IMAGE_PLACEHOLDER).build();
                }
                yield o;
            }
            case "tool_result" -> o.containsKey("content")
                    ? JSON.createObjectBuilder(o).add("content", content(o.get("content"))).build() : o;
            default -> o;
        };
    }

    private JsonValue text(JsonString s) {
        String value = s.getString();
        if (!value.isBlank()) {
            text = true;
        }
        Matcher m = DATA_URL.matcher(value);
        StringBuilder withoutImages = null;
        int last = 0;
        while (m.find()) {
            images++;
            if (config.images() == PrivacyGuardConfig.ImageMode.REDACT) {
                if (withoutImages == null) {
                    withoutImages = new StringBuilder(value.length());
                }
                withoutImages.append(value, last, m.start()).append(IMAGE_PLACEHOLDER);
                last = m.end();
            }
        }
        String current = withoutImages == null ? value
                : withoutImages.append(value, last, value.length()).toString();
        PiiScanner.Result pii = PiiScanner.scan(current, config.pii() == PrivacyGuardConfig.PiiMode.REDACT);
        emails += pii.emails();
        phones += pii.phones();
        if (pii.text().equals(value)) {
            return s;
        }
        changed = true;
        return JSON.createValue(pii.text());
    }
}
