package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.WebSocketMessage;
import dev.openshell.middleware.spi.WebSocketMessageResult;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.WebSocketPreflightDecision;
import dev.openshell.middleware.spi.WebSocketSession;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code openshell/regex} on WebSocket text messages ({@code WEBSOCKET_MESSAGE}, both directions): each message is
 * read as its receiver will, as a JSON text when it is one (string escapes decoded, as for a JSON body) and as plain
 * UTF-8 otherwise, and scanned like a request body. {@code mode: redact} allows it with each match replaced by
 * {@code [REDACTED:<id>]} (JSON stays valid); {@code mode: deny} denies it with {@value RegexProvider#DENY_CODE}.
 * Findings and metadata as for bodies; matched values never appear in a result. The preflight always inspects.
 */
final class MessageScan implements WebSocketSession {
    private static final List<HttpHeader> JSON = List.of(new HttpHeader("content-type", "application/json"));
    private static final List<HttpHeader> TEXT = List.of(new HttpHeader("content-type", "text/plain; charset=utf-8"));

    private final Function<dev.openshell.middleware.spi.WebSocketPreflight, RegexConfig> configOf;
    /** The readings of the two Content-Type values a message is decoded under, remembered for the session. */
    private final ContentTypes contentTypes = new ContentTypes();
    private RegexConfig config;

    MessageScan(Function<WebSocketPreflight, RegexConfig> configOf) {
        this.configOf = configOf;
    }

    @Override
    public WebSocketPreflightDecision preflight(WebSocketPreflight preflight) {
        config = configOf.apply(preflight);
        return WebSocketPreflightDecision.inspect();
    }

    @Override
    public WebSocketMessageResult message(WebSocketMessage message) {
        if (config == null) {
            throw new MiddlewareException(RegexProvider.INVALID_CONFIG_CODE, "a message before the preflight");
        }
        byte[] utf8 = message.text().getBytes(StandardCharsets.UTF_8);
        ByteBuffer bytes = ByteBuffer.wrap(utf8).asReadOnlyBuffer();
        TextView view = view(message.text(), bytes);
        boolean redact = config.mode() == RegexConfig.Mode.REDACT;
        Scan scan = SecretScanner.scan(view.text(), config.selection(), redact);
        if (scan.isEmpty()) {
            return WebSocketMessageResult.allow(message.sequence());
        }
        Map<String, String> metadata = Map.of("matches", Integer.toString(scan.total()),
                "action", redact ? "redacted" : "denied");
        if (!redact) {
            return new WebSocketMessageResult(message.sequence(), Decision.DENY, Optional.empty(),
                    "message contains secrets", RegexProvider.DENY_CODE, RegexProvider.findings(scan), metadata);
        }
        byte[] redacted = Edit.apply(bytes.duplicate(), view.toInput(scan.edits()));
        if (redacted.length > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new MiddlewareException(RegexProvider.REDACTED_TOO_LARGE_CODE,
                    "redacted message would exceed the 4 MiB platform maximum");
        }
        return new WebSocketMessageResult(message.sequence(), Decision.ALLOW,
                Optional.of(new String(redacted, StandardCharsets.UTF_8)), "", "", RegexProvider.findings(scan),
                metadata);
    }

    /** {@return the message as its receiver reads it: a JSON text decoded, else the UTF-8 text itself} */
    private TextView view(String text, ByteBuffer bytes) {
        String t = text.strip();
        if (t.startsWith("{") || t.startsWith("[") || t.startsWith("\"")) {
            try {
                return BodyDecoder.decode(JSON, bytes.duplicate(), contentTypes);
            } catch (Undecodable e) {
                // not JSON after all: read as text
            }
        }
        try {
            return BodyDecoder.decode(TEXT, bytes.duplicate(), contentTypes);
        } catch (Undecodable e) {
            return TextView.identity(bytes.duplicate());
        }
    }
}
