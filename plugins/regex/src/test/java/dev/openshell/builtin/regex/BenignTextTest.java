package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Text agents send that holds no secret, with the look of one here and there (hashes, identifiers, placeholders,
 * words that start like a prefix, keys of a provider that name no credential): the default catalog finds nothing in
 * it, as the seven formats before it did not.
 */
class BenignTextTest {
    static List<String> benign() {
        return List.of(
                "username=alice&password=Zq8rT2mW4xY7pL9k",
                "{\"username\":\"alice\",\"password\":\"hunter2hunter2hunter2\"}",
                "The skeleton key asks: is the task-runner skipping the risk-assessment step?",
                "commit 3f2a9c1e5b7d0f4a6c8e2b9d1f3a5c7e9b0d2f4a\nAuthor: Alice <alice@example.com>",
                "\"integrity\": \"sha512-Zq8rT2mW4xY7pL9kB3nV5cX1zA6sD0fG8hJ2kL4qW7eR9tY1uI3oP5aS7dF9gH1jK3lZ5xC7vB9nM==\"",
                "image: registry.example.com/app@sha256:9f2c4e6a8b0d1f3e5a7c9b2d4f6a8c0e9f2c4e6a8b0d1f3e5a7c9b2d4f6a8c0e",
                "{\"id\":\"3fa85f64-5717-4562-b3fc-2c963f66afa6\",\"trace_id\":\"9f2c4e6a8b0d1f3e5a7c9b2d4f6a8c0e\"}",
                "datadog_trace_id: 9f2c4e6a8b0d1f3e5a7c9b2d4f6a8c0e\nsentry_release: 3f2a9c1e5b7d0f4a6c8e2b9d1f3a5c7e9b0d2f4a",
                "OPENAI_API_KEY=your-api-key-here\nSTRIPE_SECRET_KEY=sk_test_xxxxxxxxxxxx\nGITHUB_TOKEN=<token>",
                "twilio_auth_token = \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"",
                "Authorization: Bearer $TOKEN\nAuthorization: Basic authentication is deprecated",
                "color: #a3b2c1; background: #ffffff; font-family: 'Helvetica Neue';",
                "The Bearer tokens are described in RFC 6750; Basic auth in RFC 7617.",
                "pip install scikit-learn sk-video; npm install hf_transfer; cargo add glob",
                "def tokenize(text):\n    token = text.split()\n    return token  # the tokenizer's token list",
                "https://github.com/openshell/supervisor/pull/37#discussion_r1234567890",
                "[REDACTED:openai_api_key] and [REDACTED:aws_access_key_id] were removed",
                "eyes on the keyboard: they typed 'key' and 'eye' and 'obey' twenty times",
                "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.",
                "SELECT id, name FROM users WHERE api_version = 'v2' AND plan = 'pro';",
                "base64 image: data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
                        + "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
                "path: /home/alice/projects/patterns/pathfinder/patch-notes.md",
                "secret_santa_list = ['alice', 'bob']\nsecretary: carol",
                "The dose is 25 mg; the sl. slope; AKIDO is a dojo; SCWRL4 is a tool.");
    }

    @ParameterizedTest
    @MethodSource("benign")
    void theDefaultCatalogFindsNothing(String text) {
        Scan scan = SecretScanner.scan(ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)),
                Selection.defaults(), true);
        assertEquals(Map.of(), scan.byId(), text);
    }
}
