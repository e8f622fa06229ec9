package dev.openshell.supervisor.runtime;

import dev.openshell.supervisor.engine.chain.BodyRecheck;
import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.io.StringReader;
import java.util.Locale;
import java.util.Optional;

/**
 * The body-aware L7 re-check after a body replacement (RFC 0009, "Operation phases and placement": "After a stage
 * replaces the request body, OpenShell re-evaluates body-aware GraphQL, JSON-RPC, or MCP policy ... A policy evaluation
 * error or an unparseable replacement is a hard denial").
 *
 * <p>This supervisor checks that a replacement still parses as the endpoint's protocol: a JSON-RPC 2.0 request or
 * batch for {@code json-rpc} and {@code mcp}; a JSON object with a string {@code query}, or a non-empty
 * {@code application/graphql} document, for {@code graphql}. Anything else throws, which the chain engine turns into
 * a hard deny. Rule-level L7 evaluation (methods, operations) is not implemented; endpoints without a body-aware
 * protocol pass.
 */
final class BodyAwarePolicy {
    private BodyAwarePolicy() {
    }

    /** {@return the re-check for an endpoint protocol} @param protocol the endpoint's declared protocol */
    static BodyRecheck forProtocol(Optional<String> protocol) {
        return switch (protocol.orElse("")) {
            case "json-rpc", "mcp" -> BodyAwarePolicy::jsonRpc;
            case "graphql" -> BodyAwarePolicy::graphql;
            default -> BodyRecheck.none();
        };
    }

    private static BodyRecheck.Verdict jsonRpc(BodyRecheck.Request r) {
        JsonValue v = parse(r);
        if (v instanceof JsonArray batch && !batch.isEmpty()) {
            batch.forEach(BodyAwarePolicy::requireJsonRpcRequest);
        } else {
            requireJsonRpcRequest(v);
        }
        return BodyRecheck.Verdict.PASS;
    }

    private static void requireJsonRpcRequest(JsonValue v) {
        if (!(v instanceof JsonObject o) || !"2.0".equals(o.getString("jsonrpc", null))
                || !(o.get("method") instanceof JsonString)) {
            throw new IllegalArgumentException("replacement body is not a JSON-RPC 2.0 request");
        }
    }

    private static BodyRecheck.Verdict graphql(BodyRecheck.Request r) {
        boolean document = r.headers().stream().anyMatch(h -> h.name().equalsIgnoreCase("content-type")
                && h.value().toLowerCase(Locale.ROOT).startsWith("application/graphql"));
        if (document) {
            if (r.body().utf8().map(String::isBlank).orElse(true)) {
                throw new IllegalArgumentException("replacement body is not a GraphQL document");
            }
            return BodyRecheck.Verdict.PASS;
        }
        if (!(parse(r) instanceof JsonObject o) || !(o.get("query") instanceof JsonString)) {
            throw new IllegalArgumentException("replacement body is not a GraphQL request");
        }
        return BodyRecheck.Verdict.PASS;
    }

    private static JsonValue parse(BodyRecheck.Request r) {
        String text = r.body().utf8().orElseThrow(() -> new IllegalArgumentException("replacement body is not UTF-8"));
        try (JsonReader reader = Json.createReader(new StringReader(text))) {
            return reader.readValue();
        }
    }

}
