package dev.openshell.supervisor.l7;

import dev.openshell.middleware.spi.internal.AuditNames;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;

/**
 * Parses a JSON-RPC 2.0 request body into calls (OpenShell {@code l7/jsonrpc.rs}): one message or a batch (an array,
 * not empty); every message has {@code "jsonrpc": "2.0"}; a request or notification has a string {@code method} and
 * no {@code result}/{@code error}; a response frame has exactly one of {@code result} and {@code error} ({@code error}
 * an object) and an {@code id} that is a string, a number or null. Parameters are never read, except the MCP
 * {@code tools/call} tool name ({@code params.name}).
 */
final class JsonRpc {
    /** The strict MCP tool name (OpenShell {@code jsonrpc.rs:449-463}). */
    static final Pattern STRICT_TOOL = Pattern.compile("[A-Za-z0-9_.-]{1,128}");

    /** A parse failure: a hard denial, whatever the enforcement. */
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
     * One message of the body.
     *
     * @param method the method; empty for a response frame
     * @param tool the {@code tools/call} tool name (MCP only)
     * @param response whether this is a response frame (client to server)
     */
    record Call(Optional<String> method, Optional<String> tool, boolean response) {
        String describe() {
            return response ? "(response)" : method.map(AuditNames::safe).orElse("?")
                    + tool.map(t -> "[" + AuditNames.safe(t) + "]").orElse("");
        }
    }

    private JsonRpc() {
    }

    static List<Call> parse(byte[] body, boolean mcp, boolean strictToolNames) throws Invalid {
        String text = Bodies.utf8(body).orElseThrow(() -> new Invalid(prefix(mcp) + "the body is not UTF-8"));
        JsonValue v;
        try {
            v = Bodies.json(text);
        } catch (Bodies.Malformed e) {
            throw new Invalid(e.code(), prefix(mcp) + e.getMessage());
        }
        List<Call> calls = new ArrayList<>();
        if (v instanceof JsonArray batch) {
            if (batch.isEmpty()) {
                throw new Invalid(prefix(mcp) + "empty batch");
            }
            for (JsonValue item : batch) {
                try {
                    calls.add(message(item, mcp, strictToolNames));
                } catch (Invalid e) {
                    throw new Invalid(e.code().orElse(null), prefix(mcp) + "batch item invalid: " + e.getMessage());
                }
            }
            return calls;
        }
        try {
            calls.add(message(v, mcp, strictToolNames));
        } catch (Invalid e) {
            throw new Invalid(e.code().orElse(null), prefix(mcp) + e.getMessage());
        }
        return calls;
    }

    /** {@return the governed member {@code name} of {@code o}, read as {@link Bodies#member} reads it} */
    private static JsonValue member(JsonObject o, String name) throws Invalid {
        try {
            return Bodies.member(o, name);
        } catch (Bodies.Malformed e) {
            throw new Invalid(e.code(), e.getMessage());
        }
    }

    private static String prefix(boolean mcp) {
        return mcp ? "MCP request rejected: " : "JSON-RPC request rejected: ";
    }

    private static Call message(JsonValue v, boolean mcp, boolean strict) throws Invalid {
        if (!(v instanceof JsonObject o)) {
            throw new Invalid("a message is not a JSON object");
        }
        if (!(member(o, "jsonrpc") instanceof JsonString version) || !version.getString().equals("2.0")) {
            throw new Invalid("a message lacks \"jsonrpc\": \"2.0\"");
        }
        boolean hasResult = member(o, "result") != null;
        boolean hasError = member(o, "error") != null;
        JsonValue method = member(o, "method");
        JsonValue id = member(o, "id");
        if (id != null && !(id instanceof JsonString) && id.getValueType() != JsonValue.ValueType.NUMBER
                && id != JsonValue.NULL) {
            throw new Invalid("id is not a string, a number or null");
        }
        if (method != null) {
            if (hasResult || hasError) {
                throw new Invalid("a message has both method and result/error");
            }
            if (!(method instanceof JsonString m) || m.getString().isEmpty()) {
                throw new Invalid("method is not a non-empty string");
            }
            JsonValue params = member(o, "params");
            if (params != null && !(params instanceof JsonObject) && !(params instanceof JsonArray)) {
                throw new Invalid("params is not an object or an array");
            }
            Optional<String> tool = Optional.empty();
            if (mcp) {
                if (params != null && !(params instanceof JsonObject)) {
                    throw new Invalid("MCP params is not an object");
                }
                if (m.getString().equals("tools/call")) {
                    if (!(params instanceof JsonObject p) || !(member(p, "name") instanceof JsonString name)) {
                        throw new Invalid("tools/call needs params.name, a string");
                    }
                    if (strict && !STRICT_TOOL.matcher(name.getString()).matches()) {
                        throw new Invalid("the tool name is not a strict tool name ([A-Za-z0-9_.-]{1,128})");
                    }
                    tool = Optional.of(name.getString());
                }
            }
            return new Call(Optional.of(m.getString()), tool, false);
        }
        if (hasResult == hasError) {
            throw new Invalid("a message is neither a request (method) nor a response (result or error)");
        }
        if (hasError && !(member(o, "error") instanceof JsonObject)) {
            throw new Invalid("error is not an object");
        }
        if (id == null) {
            throw new Invalid("a response has no id");
        }
        return new Call(Optional.empty(), Optional.empty(), true);
    }
}
