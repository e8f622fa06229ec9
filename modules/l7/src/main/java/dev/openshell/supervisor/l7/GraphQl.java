package dev.openshell.supervisor.l7;

import dev.openshell.supervisor.policy.GraphQlOperationSpec;
import dev.openshell.supervisor.policy.L7Endpoint;

import graphql.language.Definition;
import graphql.language.Document;
import graphql.language.Field;
import graphql.language.FragmentDefinition;
import graphql.language.FragmentSpread;
import graphql.language.InlineFragment;
import graphql.language.OperationDefinition;
import graphql.language.Selection;
import graphql.language.SelectionSet;
import graphql.parser.Parser;
import graphql.parser.ParserEnvironment;
import graphql.parser.ParserOptions;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * Classifies a GraphQL-over-HTTP request into operations (OpenShell {@code l7/graphql.rs}): {@code GET} from the
 * query string, {@code POST} from a JSON body (an object, or an array for a batch), every document parsed with
 * graphql-java's parser (at most {@value #MAX_TOKENS} tokens and {@value #MAX_DEPTH} levels of nesting).
 */
final class GraphQl {
    static final int MAX_TOKENS = 20_000;
    static final int MAX_DEPTH = 128;
    private static final List<String> ID_KEYS = List.of("id", "documentId", "queryId");

    /** A classification failure: a hard denial, whatever the enforcement. */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;

        Invalid(String message) {
            super(message);
        }
    }

    /**
     * One operation to evaluate.
     *
     * @param type {@code query}, {@code mutation} or {@code subscription}; empty for a persisted query that is not
     *     registered
     * @param name the operation name, {@code ""} when anonymous
     * @param fields the sorted distinct root field names
     * @param persisted whether the request named a persisted query
     */
    record Operation(String type, String name, List<String> fields, boolean persisted) {
        String describe() {
            return (type.isEmpty() ? "persisted" : type) + (name.isEmpty() ? "" : " " + name) + " {"
                    + String.join(",", fields) + "}";
        }
    }

    private GraphQl() {
    }

    static List<Operation> classifyHttp(String method, Map<String, List<String>> query, L7Request request,
                                        L7Endpoint endpoint) throws Invalid {
        String m = method.toUpperCase(Locale.ROOT);
        if (m.equals("GET")) {
            Map<String, String> control = new HashMap<>();
            for (String key : List.of("query", "operationName", "extensions", "id", "documentId", "queryId")) {
                List<String> values = query.get(key);
                if (values != null) {
                    if (values.size() > 1) {
                        throw new Invalid("GraphQL request rejected: duplicate " + key + " parameter");
                    }
                    control.put(key, values.get(0));
                }
            }
            JsonObject extensions = null;
            if (control.containsKey("extensions")) {
                try {
                    if (parseJson(control.get("extensions")) instanceof JsonObject o) {
                        extensions = o;
                    }
                } catch (Invalid ignored) {
                    // OpenShell ignores invalid extensions JSON on GET
                }
            }
            String id = null;
            for (String k : ID_KEYS) {
                if (control.containsKey(k)) {
                    if (id != null) {
                        throw new Invalid("GraphQL request rejected: more than one persisted query id parameter");
                    }
                    id = control.get(k);
                }
            }
            return envelope(control.get("query"), control.get("operationName"), extensions, id, endpoint);
        }
        if (!m.equals("POST")) {
            throw new Invalid("GraphQL request rejected: unsupported GraphQL HTTP method " + printable(m));
        }
        checkBodyHeaders(request);
        byte[] body = request.body().orElse(new byte[0]);
        if (body.length == 0) {
            throw new Invalid("GraphQL request rejected: empty body");
        }
        JsonValue v = parseJson(utf8(body));
        if (v instanceof JsonArray batch) {
            if (batch.isEmpty()) {
                throw new Invalid("GraphQL request rejected: empty batch");
            }
            List<Operation> ops = new ArrayList<>();
            for (JsonValue item : batch) {
                ops.addAll(jsonEnvelope(item, endpoint));
            }
            return ops;
        }
        return jsonEnvelope(v, endpoint);
    }

    /** A JSON envelope ({@code query}, {@code operationName}, {@code extensions}, ids): POST items and WS payloads. */
    static List<Operation> jsonEnvelope(JsonValue v, L7Endpoint endpoint) throws Invalid {
        if (!(v instanceof JsonObject o)) {
            throw new Invalid("GraphQL request rejected: the body is not a JSON object");
        }
        String query = optionalString(o, "query");
        String name = optionalString(o, "operationName");
        JsonObject extensions = o.get("extensions") instanceof JsonObject e ? e : null;
        String id = null;
        for (String k : ID_KEYS) {
            String value = optionalString(o, k);
            if (value != null) {
                if (id != null) {
                    throw new Invalid("GraphQL request rejected: more than one persisted query id");
                }
                id = value;
            }
        }
        return envelope(query, name, extensions, id, endpoint);
    }

    private static String optionalString(JsonObject o, String key) throws Invalid {
        JsonValue v = o.get(key);
        if (v == null || v == JsonValue.NULL) {
            return null;
        }
        if (v instanceof JsonString s) {
            return s.getString();
        }
        if (key.equals("id") && v.getValueType() == JsonValue.ValueType.NUMBER) {
            return v.toString();
        }
        throw new Invalid("GraphQL request rejected: " + key + " is not a string");
    }

    private static List<Operation> envelope(String query, String operationName, JsonObject extensions, String id,
                                            L7Endpoint endpoint) throws Invalid {
        String hash = null;
        if (extensions != null && extensions.get("persistedQuery") instanceof JsonObject pq
                && pq.get("sha256Hash") instanceof JsonString h) {
            hash = h.getString();
        }
        boolean persisted = hash != null || id != null;
        if (query != null) {
            return List.of(document(query, operationName, persisted));
        }
        if (!persisted) {
            throw new Invalid("GraphQL request rejected: no query document");
        }
        Optional<GraphQlOperationSpec> spec = Optional.empty();
        if (endpoint.allowRegisteredPersistedQueries()) {
            for (String key : new String[] {hash, id}) {
                if (key != null && spec.isEmpty()) {
                    spec = Optional.ofNullable(endpoint.persistedQueries().get(key));
                }
            }
        }
        if (spec.isEmpty()) {
            return List.of(new Operation("", operationName == null ? "" : operationName, List.of(), true));
        }
        GraphQlOperationSpec s = spec.get();
        return List.of(new Operation(s.operationType(), s.operationName().orElse(
                operationName == null ? "" : operationName), s.fields().castToList(), true));
    }

    static Operation document(String text, String operationName, boolean persisted) throws Invalid {
        Document doc;
        try {
            ParserOptions options = ParserOptions.newParserOptions().maxTokens(MAX_TOKENS).maxRuleDepth(MAX_DEPTH)
                    .maxCharacters(L7Endpoint.MAX_BODY_BYTES_LIMIT).captureSourceLocation(false)
                    .captureIgnoredChars(false).captureLineComments(false).redactTokenParserErrorMessages(true)
                    .build();
            doc = new Parser().parseDocument(ParserEnvironment.newParserEnvironment()
                    .document(new StringReader(text)).parserOptions(options).build());
        } catch (RuntimeException | StackOverflowError e) {
            throw new Invalid("GraphQL request rejected: GraphQL document parse error");
        }
        List<OperationDefinition> operations = new ArrayList<>();
        Map<String, FragmentDefinition> fragments = new HashMap<>();
        for (Definition<?> d : doc.getDefinitions()) {
            if (d instanceof OperationDefinition op) {
                operations.add(op);
            } else if (d instanceof FragmentDefinition f) {
                fragments.put(f.getName(), f);
            } else {
                throw new Invalid("GraphQL request rejected: the document is not an executable document");
            }
        }
        if (operations.isEmpty()) {
            throw new Invalid("GraphQL request rejected: the document has no operation");
        }
        OperationDefinition chosen;
        if (operationName != null && !operationName.isEmpty()) {
            chosen = operations.stream().filter(o -> operationName.equals(o.getName())).findFirst()
                    .orElseThrow(() -> new Invalid("GraphQL request rejected: operationName names no operation of"
                            + " the document"));
        } else if (operations.size() == 1) {
            chosen = operations.get(0);
        } else {
            throw new Invalid("GraphQL request rejected: the document has several operations and no operationName");
        }
        String type = switch (chosen.getOperation()) {
            case MUTATION -> "mutation";
            case SUBSCRIPTION -> "subscription";
            default -> "query";
        };
        Set<String> fields = new TreeSet<>();
        collect(chosen.getSelectionSet(), fragments, new HashSet<>(), fields, 0);
        return new Operation(type, chosen.getName() == null ? "" : chosen.getName(), List.copyOf(fields),
                persisted);
    }

    private static void collect(SelectionSet set, Map<String, FragmentDefinition> fragments, Set<String> visiting,
                                Set<String> out, int depth) throws Invalid {
        if (set == null) {
            return;
        }
        if (depth > MAX_DEPTH) {
            throw new Invalid("GraphQL request rejected: fragments nest too deeply");
        }
        for (Selection<?> s : set.getSelections()) {
            if (s instanceof Field f) {
                out.add(f.getName());
            } else if (s instanceof InlineFragment i) {
                collect(i.getSelectionSet(), fragments, visiting, out, depth + 1);
            } else if (s instanceof FragmentSpread spread) {
                FragmentDefinition def = fragments.get(spread.getName());
                if (def == null) {
                    throw new Invalid("GraphQL request rejected: unknown fragment");
                }
                if (visiting.add(spread.getName())) {
                    collect(def.getSelectionSet(), fragments, visiting, out, depth + 1);
                    visiting.remove(spread.getName());
                }
            }
        }
    }

    private static void checkBodyHeaders(L7Request request) throws Invalid {
        Optional<String> encoding = request.header("Content-Encoding");
        if (encoding.isPresent() && !encoding.get().trim().equalsIgnoreCase("identity")) {
            throw new Invalid("GraphQL request rejected: unsupported Content-Encoding");
        }
        Optional<String> type = request.header("Content-Type");
        if (type.isPresent() && type.get().trim().toLowerCase(Locale.ROOT).startsWith("multipart/")) {
            throw new Invalid("GraphQL request rejected: multipart bodies are not inspected");
        }
    }

    static JsonValue parseJson(String text) throws Invalid {
        return Bodies.json(text).orElseThrow(() -> new Invalid("GraphQL request rejected: invalid JSON"));
    }

    static String utf8(byte[] body) throws Invalid {
        return Bodies.utf8(body).orElseThrow(() -> new Invalid("GraphQL request rejected: the body is not UTF-8"));
    }

    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && i < 32; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x21 && c < 0x7F ? c : '?');
        }
        return b.toString();
    }
}
