package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.internal.AuditNames;
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
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
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
 *
 * <p>Everything the upstream may read decides ({@code docs/policy-reference.md}, "GraphQL request shapes"): a
 * {@code GET} with a body, a {@code POST} with GraphQL parameters in its query string, a persisted-query id with a
 * different {@code extensions} hash, a document with a hash that is not its SHA-256, and unreadable
 * {@code extensions} are refused as ambiguous ({@value #AMBIGUOUS}); a document sent with a persisted-query id is
 * judged together with the id's registry entry.
 */
final class GraphQl {
    static final int MAX_TOKENS = 20_000;
    static final int MAX_DEPTH = 128;
    /** The code of a request whose operation depends on which of its parts the upstream reads. */
    static final String AMBIGUOUS = "graphql_ambiguous_request";
    private static final List<String> ID_KEYS = List.of("id", "documentId", "queryId");
    /** The query-string parameters that choose the operation. */
    private static final List<String> CONTROL = List.of("query", "operationName", "extensions", "id", "documentId",
            "queryId");

    /** A classification failure: a hard denial, whatever the enforcement. */
    static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;
        private final String code;

        Invalid(String message) {
            this(null, message);
        }

        Invalid(String code, String message) {
            super(message, null, false, false);
            this.code = code;
        }

        /** {@return the refusal's code, when its cause has a fixed name} */
        Optional<String> code() {
            return Optional.ofNullable(code);
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
            return (type.isEmpty() ? "persisted" : type) + (name.isEmpty() ? "" : " " + AuditNames.safe(name)) + " {"
                    + String.join(",", fields.stream().map(AuditNames::safe).toList()) + "}";
        }
    }

    /**
     * What one request (or one batch item) names: a document, an operation name, a persisted-query id and an
     * {@code extensions} hash, each absent ({@code null}) or given once.
     */
    private record Envelope(String query, String operationName, String id, String hash) {
    }

    private GraphQl() {
    }

    static List<Operation> classifyHttp(String method, Map<String, List<String>> query, L7Request request,
                                        L7Endpoint endpoint) throws Invalid {
        String m = method.toUpperCase(Locale.ROOT);
        if (m.equals("GET")) {
            if (request.body().map(b -> !b.isEmpty()).orElse(false)) {
                throw ambiguous("a GET request carries a body, which some GraphQL servers read as well as the query"
                        + " string");
            }
            return getEnvelope(query, endpoint);
        }
        if (!m.equals("POST")) {
            throw new Invalid("GraphQL request rejected: unsupported GraphQL HTTP method " + AuditNames.safe(m));
        }
        for (String key : CONTROL) {
            if (query.containsKey(key)) {
                throw ambiguous("a POST request carries the GraphQL parameter " + key + " in its query string as"
                        + " well as a body");
            }
        }
        checkBodyHeaders(request);
        byte[] body = request.body().map(Body::toByteArray).orElse(new byte[0]);
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

    /** A GET: the control parameters of the query string, each at most once. */
    private static List<Operation> getEnvelope(Map<String, List<String>> query, L7Endpoint endpoint)
            throws Invalid {
        Map<String, String> control = new HashMap<>();
        for (String key : CONTROL) {
            List<String> values = query.get(key);
            if (values != null) {
                if (values.size() > 1) {
                    throw new Invalid("GraphQL request rejected: duplicate " + key + " parameter");
                }
                control.put(key, values.get(0));
            }
        }
        String hash = null;
        if (control.containsKey("extensions")) {
            JsonValue extensions;
            try {
                extensions = parseJson(control.get("extensions"));
            } catch (Invalid e) {
                throw e.code().filter(c -> !c.equals("json_invalid")).isPresent() ? e
                        : ambiguous("the extensions parameter is not a JSON object");
            }
            hash = hash(extensions);
        }
        String id = null;
        for (String k : ID_KEYS) {
            if (control.containsKey(k)) {
                if (id != null) {
                    throw ambiguous("more than one persisted query id parameter");
                }
                id = control.get(k);
            }
        }
        return envelope(new Envelope(control.get("query"), control.get("operationName"), id, hash), endpoint);
    }

    /** A JSON envelope ({@code query}, {@code operationName}, {@code extensions}, ids): POST items and WS payloads. */
    static List<Operation> jsonEnvelope(JsonValue v, L7Endpoint endpoint) throws Invalid {
        if (!(v instanceof JsonObject o)) {
            throw new Invalid("GraphQL request rejected: the body is not a JSON object");
        }
        String query = optionalString(o, "query");
        String name = optionalString(o, "operationName");
        JsonValue extensions = member(o, "extensions");
        String hash = extensions == null || extensions == JsonValue.NULL ? null : hash(extensions);
        String id = null;
        for (String k : ID_KEYS) {
            String value = optionalString(o, k);
            if (value != null) {
                if (id != null) {
                    throw ambiguous("more than one persisted query id");
                }
                id = value;
            }
        }
        return envelope(new Envelope(query, name, id, hash), endpoint);
    }

    /** {@return the persisted-query hash of an {@code extensions} value, or null} Anything unreadable is refused. */
    private static String hash(JsonValue extensions) throws Invalid {
        if (!(extensions instanceof JsonObject e)) {
            throw ambiguous("extensions is not a JSON object");
        }
        JsonValue pq = member(e, "persistedQuery");
        if (pq == null || pq == JsonValue.NULL) {
            return null;
        }
        if (!(pq instanceof JsonObject p)) {
            throw ambiguous("extensions.persistedQuery is not a JSON object");
        }
        JsonValue h = member(p, "sha256Hash");
        if (h == null || h == JsonValue.NULL) {
            return null;
        }
        if (!(h instanceof JsonString s)) {
            throw ambiguous("extensions.persistedQuery.sha256Hash is not a string");
        }
        return s.getString();
    }

    /** {@return the governed member {@code name} of {@code o}, read as {@link Bodies#member} reads it} */
    private static JsonValue member(JsonObject o, String name) throws Invalid {
        try {
            return Bodies.member(o, name);
        } catch (Bodies.Malformed e) {
            throw new Invalid(e.code(), "GraphQL request rejected: " + e.getMessage());
        }
    }

    private static String optionalString(JsonObject o, String key) throws Invalid {
        JsonValue v = member(o, key);
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

    /**
     * The operations of one envelope. A document with a hash must be the hash's document (automatic persisted
     * queries: its SHA-256); an id with a hash must name the same entry; a document with an id is judged with the
     * id's entry, since the upstream may run either.
     */
    private static List<Operation> envelope(Envelope env, L7Endpoint endpoint) throws Invalid {
        if (env.id() != null && env.hash() != null && !env.id().equals(env.hash())) {
            throw ambiguous("a persisted query id and a different extensions hash name two documents");
        }
        if (env.query() != null && env.hash() != null && !sha256(env.query()).equalsIgnoreCase(env.hash())) {
            throw ambiguous("the extensions hash is not the SHA-256 of the query document");
        }
        boolean persisted = env.hash() != null || env.id() != null;
        List<Operation> ops = new ArrayList<>(2);
        if (env.query() != null) {
            ops.add(document(env.query(), env.operationName(), persisted));
        }
        if (env.query() == null || (env.id() != null && env.hash() == null)) {
            if (!persisted) {
                throw new Invalid("GraphQL request rejected: no query document");
            }
            ops.add(registered(env.id() != null ? env.id() : env.hash(), env.operationName(), endpoint));
        }
        return List.copyOf(ops);
    }

    /** {@return the registry entry of a persisted query as an operation, or the unregistered operation} */
    private static Operation registered(String key, String operationName, L7Endpoint endpoint) {
        String name = operationName == null ? "" : operationName;
        Optional<GraphQlOperationSpec> spec = endpoint.allowRegisteredPersistedQueries()
                ? Optional.ofNullable(endpoint.persistedQueries().get(key)) : Optional.empty();
        if (spec.isEmpty()) {
            return new Operation("", name, List.of(), true);
        }
        GraphQlOperationSpec s = spec.get();
        return new Operation(s.operationType(), s.operationName().orElse(name), s.fields().castToList(), true);
    }

    private static String sha256(String document) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                    .digest(document.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is a required algorithm", e);
        }
    }

    /**
     * Refuses a query string whose GraphQL parameters ({@code query}, {@code operationName}, {@code extensions} and the
     * ids) some framework reads otherwise than split at {@code &} with names as sent ({@link QueryReadings}):
     * {@code ?query={viewer};query=mutation...} to Rack 2, {@code ?query={viewer}&%20query=mutation...} to PHP.
     *
     * @param readings the readings of the request's query
     * @throws Invalid ({@link #AMBIGUOUS}) if a reading gives one of them other values
     */
    static void sameInEveryReading(QueryReadings readings) throws Invalid {
        for (String key : CONTROL) {
            if (!readings.agrees(key)) {
                throw ambiguous("the query string gives the GraphQL parameter " + key + " other values to"
                        + " frameworks that split it at ; or read parameter names as PHP does");
            }
        }
    }

    private static Invalid ambiguous(String what) {
        return new Invalid(AMBIGUOUS, "GraphQL request rejected: " + what);
    }

    static Operation document(String text, String operationName, boolean persisted) throws Invalid {
        checkNumbers(text);
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

    /**
     * Refuses a number literal longer than {@value Bodies#MAX_NUMBER_CHARS} characters before the document is parsed:
     * graphql-java's lexer and its {@code BigInteger} grow faster than linearly with a number's length (a 64 KiB
     * integer costs about a second of CPU). Strings, block strings, comments and names are skipped as the GraphQL
     * lexer reads them (October 2021 edition, section 2.1), so digits inside them do not count.
     */
    static void checkNumbers(String doc) throws Invalid {
        int n = doc.length();
        int i = 0;
        while (i < n) {
            char c = doc.charAt(i);
            if (c == '#') {
                while (i < n && doc.charAt(i) != '\n' && doc.charAt(i) != '\r') {
                    i++;
                }
            } else if (doc.startsWith("\"\"\"", i)) {
                i += 3;
                while (i < n && !doc.startsWith("\"\"\"", i)) {
                    i += doc.startsWith("\\\"\"\"", i) ? 4 : 1;
                }
                i += 3;
            } else if (c == '"') {
                for (i++; i < n && doc.charAt(i) != '"' && doc.charAt(i) != '\n'; i++) {
                    if (doc.charAt(i) == '\\') {
                        i++;
                    }
                }
                i++;
            } else if (c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) {
                while (i < n && nameChar(doc.charAt(i))) {
                    i++;
                }
            } else if (c == '-' || (c >= '0' && c <= '9')) {
                int start = i++;
                while (i < n && ((doc.charAt(i) >= '0' && doc.charAt(i) <= '9') || ".eE+-".indexOf(doc.charAt(i)) >= 0)) {
                    i++;
                }
                if (i - start > Bodies.MAX_NUMBER_CHARS) {
                    throw new Invalid("graphql_number_too_long", "GraphQL request rejected: a number in the document"
                            + " is longer than " + Bodies.MAX_NUMBER_CHARS + " characters");
                }
            } else {
                i++;
            }
        }
    }

    private static boolean nameChar(char c) {
        return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    }

    /**
     * Adds the root fields of {@code set} to {@code out}: its fields' names, and those of its inline fragments and of
     * the fragments it spreads, each fragment expanded once per operation ({@code expanded}): the root fields are a
     * set, so a fragment spread again (or in a cycle, which the GraphQL specification makes invalid, section
     * 5.5.2.2) adds nothing new. Expanding a spread each time it appears would cost {@code 2^D} for a document of
     * {@code D} fragments each spreading the next twice.
     */
    private static void collect(SelectionSet set, Map<String, FragmentDefinition> fragments, Set<String> expanded,
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
                collect(i.getSelectionSet(), fragments, expanded, out, depth + 1);
            } else if (s instanceof FragmentSpread spread) {
                FragmentDefinition def = fragments.get(spread.getName());
                if (def == null) {
                    throw new Invalid("GraphQL request rejected: unknown fragment");
                }
                if (expanded.add(spread.getName())) {
                    collect(def.getSelectionSet(), fragments, expanded, out, depth + 1);
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
        try {
            return Bodies.json(text);
        } catch (Bodies.Malformed e) {
            throw new Invalid(e.code(), "GraphQL request rejected: " + e.getMessage());
        }
    }

    static String utf8(byte[] body) throws Invalid {
        return Bodies.utf8(body).orElseThrow(() -> new Invalid("GraphQL request rejected: the body is not UTF-8"));
    }
}
