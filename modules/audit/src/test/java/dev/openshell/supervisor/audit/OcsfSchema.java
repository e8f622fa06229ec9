package dev.openshell.supervisor.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import jakarta.json.Json;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonValue;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A validator for the OCSF schema files in {@code tests/data/conformance/ocsf/} (a copy of the published schema files): it follows a class's
 * {@code extends} chain to the base event, merges attributes (the child wins; enums are merged, as the OCSF
 * schema compiler does), and checks an event against them:
 * required attributes present, every attribute known (to the class chain or the dictionary, which holds profile
 * attributes), JSON types per the dictionary, enum values valid (class enums first, then the dictionary's), captions
 * consistent with their {@code _id}, {@code class_uid}/{@code type_uid} arithmetic, and {@code at_least_one}
 * constraints.
 *
 * <p>Public, and packaged in this module's test JAR, so that the integration tests check a real run's events with
 * the same validator ({@code RefusalAuditIT}).
 */
public final class OcsfSchema {
    static final Path ROOT = Paths.get(System.getProperty("supervisor.testdata", "../../tests/data"), "conformance",
            "ocsf");
    private static final Map<String, String> CLASS_FILES = Map.of(
            "base_event", "events/base_event.json",
            "network", "events/network/network.json",
            "http_activity", "events/network/http_activity.json",
            "finding", "events/findings/finding.json",
            "detection_finding", "events/findings/detection_finding.json",
            "discovery", "events/discovery/discovery.json",
            "device_config_state_change", "events/discovery/device_config_state_change.json");
    /** OCSF category UIDs (categories.json is not among the shared files; these are the published values). */
    private static final Map<String, Integer> CATEGORY_UIDS = Map.of("findings", 2, "network", 4, "discovery", 5);

    private final JsonObject dictionary;

    /** Reads the schema files under {@code supervisor.testdata}. */
    public OcsfSchema() {
        assertTrue(Files.isDirectory(ROOT), "OCSF schema files missing: " + ROOT.toAbsolutePath());
        this.dictionary = read("dictionary.json").getJsonObject("attributes");
        assertEquals("1.9.0-dev", read("version.json").getString("version"), "schema version the events claim");
    }

    private static JsonObject read(String relative) {
        try (JsonReader r = Json.createReader(Files.newBufferedReader(ROOT.resolve(relative)))) {
            return r.readObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A class with its extends chain resolved. */
    record ClassDef(String name, int classUid, int categoryUid, Map<String, JsonObject> attributes,
                    List<List<String>> atLeastOne) {
    }

    ClassDef classDef(String name) {
        Map<String, JsonObject> attrs = new LinkedHashMap<>();
        List<List<String>> atLeastOne = new java.util.ArrayList<>();
        JsonObject leaf = read(CLASS_FILES.get(name));
        String category = null;
        java.util.Deque<JsonObject> chain = new java.util.ArrayDeque<>();
        for (JsonObject c = leaf; c != null; ) {
            chain.push(c);
            if (category == null && c.containsKey("category")) {
                category = c.getString("category");
            }
            c = c.containsKey("extends") ? read(CLASS_FILES.get(c.getString("extends"))) : null;
        }
        for (JsonObject c : chain) {
            for (Map.Entry<String, JsonValue> e : c.getJsonObject("attributes").entrySet()) {
                if (e.getValue() instanceof JsonObject o) {
                    JsonObject parent = attrs.getOrDefault(e.getKey(), JsonValue.EMPTY_JSON_OBJECT);
                    Map<String, JsonValue> merged = new HashMap<>(parent);
                    merged.putAll(o);
                    if (parent.containsKey("enum") && o.containsKey("enum")) {
                        // OCSF merges enums down the chain: a class adds values to its parent's (0, 99, ...)
                        Map<String, JsonValue> values = new LinkedHashMap<>(parent.getJsonObject("enum"));
                        values.putAll(o.getJsonObject("enum"));
                        merged.put("enum", Json.createObjectBuilder(values).build());
                    }
                    attrs.put(e.getKey(), Json.createObjectBuilder(merged).build());
                }
            }
            JsonObject constraints = c.getJsonObject("constraints");
            if (constraints != null && constraints.containsKey("at_least_one")) {
                atLeastOne.add(constraints.getJsonArray("at_least_one").getValuesAs(JsonValue::toString).stream()
                        .map(s -> s.replace("\"", "")).toList());
            }
        }
        assertNotNull(category, "no category for " + name);
        return new ClassDef(name, leaf.getInt("uid"), CATEGORY_UIDS.get(category), attrs, atLeastOne);
    }

    /** Fails with every problem of {@code event} against class {@code name}. */
    public void validate(String name, JsonObject event) {
        ClassDef def = classDef(name);
        List<String> problems = new java.util.ArrayList<>();
        int expectedClass = def.categoryUid() * 1000 + def.classUid();
        check(problems, event.getInt("class_uid", -1) == expectedClass, "class_uid must be " + expectedClass);
        check(problems, event.getInt("category_uid", -1) == def.categoryUid(),
                "category_uid must be " + def.categoryUid());
        long typeUid = expectedClass * 100L + event.getInt("activity_id", -1);
        check(problems, event.containsKey("type_uid") && event.getJsonNumber("type_uid").longValue() == typeUid,
                "type_uid must be class_uid * 100 + activity_id = " + typeUid);
        def.attributes().forEach((attr, spec) -> {
            if ("required".equals(spec.getString("requirement", "")) && !event.containsKey(attr)) {
                problems.add("required attribute missing: " + attr);
            }
        });
        for (Map.Entry<String, JsonValue> e : event.entrySet()) {
            String attr = e.getKey();
            JsonObject dict = dictionary.getJsonObject(attr);
            JsonObject spec = def.attributes().get(attr);
            if (dict == null && spec == null) {
                problems.add("unknown attribute: " + attr);
                continue;
            }
            JsonObject typeSource = dict != null ? dict : spec;
            checkType(problems, attr, typeSource, e.getValue());
            JsonObject enumSpec = spec != null && spec.containsKey("enum") ? spec.getJsonObject("enum")
                    : dict != null && dict.containsKey("enum") ? dict.getJsonObject("enum") : null;
            if (attr.equals("class_uid") || attr.equals("category_uid")) {
                enumSpec = null; // the base event's [0] placeholders; checked arithmetically above
            }
            if (enumSpec != null) {
                String key = e.getValue().toString();
                if (!enumSpec.containsKey(key)) {
                    problems.add(attr + " = " + key + " is not in " + enumSpec.keySet());
                } else if (attr.endsWith("_id")) {
                    String sibling = attr.substring(0, attr.length() - 3);
                    String captionAttr = event.containsKey(sibling) ? sibling
                            : attr.equals("activity_id") ? "activity_name" : null;
                    String caption = enumSpec.getJsonObject(key).getString("caption", null);
                    if (captionAttr != null && event.containsKey(captionAttr) && caption != null
                            && !caption.equals(event.getString(captionAttr))) {
                        problems.add(captionAttr + " '" + event.getString(captionAttr) + "' must be '" + caption
                                + "' for " + attr + " = " + key);
                    }
                }
            }
        }
        for (List<String> group : def.atLeastOne()) {
            check(problems, group.stream().anyMatch(event::containsKey), "at least one of " + group);
        }
        JsonObject metadata = event.getJsonObject("metadata");
        check(problems, metadata != null && metadata.containsKey("product") && metadata.containsKey("version"),
                "metadata needs product and version");
        if (!problems.isEmpty()) {
            fail(name + " event invalid:\n  " + String.join("\n  ", problems) + "\n" + event);
        }
    }

    private static void checkType(List<String> problems, String attr, JsonObject spec, JsonValue v) {
        String type = spec.getString("type", "");
        boolean array = spec.getBoolean("is_array", false);
        if (array) {
            if (v.getValueType() != JsonValue.ValueType.ARRAY) {
                problems.add(attr + " must be an array");
            }
            return;
        }
        boolean ok = switch (type) {
            case "integer_t", "long_t", "timestamp_t" -> v instanceof JsonNumber n && n.isIntegral();
            case "float_t" -> v instanceof JsonNumber;
            case "boolean_t" -> v == JsonValue.TRUE || v == JsonValue.FALSE;
            case "string_t", "datetime_t", "uuid_t", "hostname_t", "ip_t", "url_t", "email_t", "port_t" ->
                    v.getValueType() == JsonValue.ValueType.STRING
                            || (type.equals("port_t") && v instanceof JsonNumber);
            default -> v.getValueType() == JsonValue.ValueType.OBJECT; // object types
        };
        if (!ok) {
            problems.add(attr + " has the wrong JSON type for " + type + ": " + v.getValueType());
        }
    }

    private static void check(List<String> problems, boolean ok, String message) {
        if (!ok) {
            problems.add(message);
        }
    }
}
