package dev.openshell.examples.privacyguard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import dev.openshell.middleware.proto.v1.Decision;
import dev.openshell.middleware.proto.v1.Finding;
import dev.openshell.middleware.proto.v1.HttpRequestEvaluation;
import dev.openshell.middleware.proto.v1.HttpRequestResult;
import dev.openshell.middleware.proto.v1.SupervisorMiddlewarePhase;
import io.grpc.stub.ServerCallStreamObserver;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The evaluation logic on OpenAI and Anthropic request shapes. */
class PrivacyGuardServiceTest {
    private static final String PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
            + "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

    private static final String OPENAI = """
            {"model":"gpt-4o","temperature":0.70,"max_tokens":100000000000000000001,
             "messages":[
              {"role":"system","content":"You are helpful. Escalate to ops@corp.example."},
              {"role":"user","content":[
                {"type":"text","text":"What is in this picture? Call me at +1 415 555 0100."},
                {"type":"image_url","image_url":{"url":"%s"}},
                {"type":"image_url","image_url":{"url":"https://img.example/cat.jpg","detail":"low"}}
              ]}]}""".formatted(PNG);

    private static final String ANTHROPIC = """
            {"model":"claude-sonnet","max_tokens":1024,
             "system":[{"type":"text","text":"Reply to jane@corp.example"}],
             "messages":[{"role":"user","content":[
               {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/4AAQSkZJRg=="}},
               {"type":"text","text":"Inline: %s end"},
               {"type":"tool_result","tool_use_id":"t1","content":"Phone (415) 555-0100"}
             ]}]}""".formatted(PNG);

    private static HttpRequestResult eval(String body, PrivacyGuardConfig config) {
        return PrivacyGuardService.evaluate(body.getBytes(StandardCharsets.UTF_8), config);
    }

    private static Map<String, Integer> findings(HttpRequestResult r) {
        Map<String, Integer> m = new TreeMap<>();
        for (Finding f : r.getFindingsList()) {
            m.put(f.getType(), f.getCount());
        }
        return m;
    }

    private static JsonObject body(HttpRequestResult r) {
        return Json.createReader(new StringReader(r.getBody().toStringUtf8())).readObject();
    }

    @Test
    void aWebSocketTextMessageIsRedactedAndItsSequenceEchoed() {
        var m = dev.openshell.middleware.proto.v1.WebSocketMessage.newBuilder().setSequence(7)
                .setText("mail me at jane.doe@example.com").build();
        var r = PrivacyGuardService.message(m, PrivacyGuardConfig.DEFAULT);
        org.junit.jupiter.api.Assertions.assertEquals(7, r.getSequence());
        org.junit.jupiter.api.Assertions.assertEquals("mail me at [email]", r.getText());
        org.junit.jupiter.api.Assertions.assertEquals("pii.email", r.getFindings(0).getType());
        var kept = PrivacyGuardService.message(m, new PrivacyGuardConfig(PrivacyGuardConfig.ImageMode.REDACT,
                PrivacyGuardConfig.PiiMode.ALLOW));
        org.junit.jupiter.api.Assertions.assertFalse(kept.hasText(), "pii: allow keeps the message");
        org.junit.jupiter.api.Assertions.assertEquals(1, kept.getFindingsCount());
    }

    @Test
    void openAiImagesAreReplacedAndPersonalDataRedacted() {
        HttpRequestResult r = eval(OPENAI, PrivacyGuardConfig.DEFAULT);
        assertEquals(Decision.DECISION_ALLOW, r.getDecision());
        assertTrue(r.getHasBody());
        assertEquals("privacy_redacted", r.getReasonCode());
        assertEquals(Map.of("content.image", 2, "pii.email", 1, "pii.phone", 1), findings(r));
        assertEquals(Map.of("modalities", "text,image", "sensitivity", "redacted"), r.getMetadataMap());
        assertEquals(PrivacyGuardService.HEADER, r.getHeaderMutations(0).getWrite().getName());

        String out = r.getBody().toStringUtf8();
        assertFalse(out.contains("ops@corp.example") || out.contains("555 0100") || out.contains("base64")
                || out.contains("img.example"), out);
        JsonObject o = body(r);
        var parts = o.getJsonArray("messages").getJsonObject(1).getJsonArray("content");
        assertEquals(3, parts.size());
        for (int i = 1; i < 3; i++) {
            assertEquals("text", parts.getJsonObject(i).getString("type"));
            assertEquals(ChatInspector.IMAGE_PLACEHOLDER, parts.getJsonObject(i).getString("text"));
        }
        assertEquals("What is in this picture? Call me at [phone].", parts.getJsonObject(0).getString("text"));
        assertEquals("You are helpful. Escalate to [email].",
                o.getJsonArray("messages").getJsonObject(0).getString("content"));
        assertEquals("gpt-4o", o.getString("model"), "other fields are kept");
        assertTrue(out.contains("100000000000000000001"), "numbers keep their exact text: " + out);
    }

    @Test
    void anthropicImageBlocksInlineDataUrlsSystemAndToolResultsAreCovered() {
        HttpRequestResult r = eval(ANTHROPIC, PrivacyGuardConfig.DEFAULT);
        assertEquals(Map.of("content.image", 2, "pii.email", 1, "pii.phone", 1), findings(r));
        JsonObject o = body(r);
        assertEquals("Reply to [email]", o.getJsonArray("system").getJsonObject(0).getString("text"));
        var blocks = o.getJsonArray("messages").getJsonObject(0).getJsonArray("content");
        assertEquals(ChatInspector.IMAGE_PLACEHOLDER, blocks.getJsonObject(0).getString("text"));
        assertEquals("Inline: " + ChatInspector.IMAGE_PLACEHOLDER + " end", blocks.getJsonObject(1).getString("text"));
        assertEquals("Phone [phone]", blocks.getJsonObject(2).getString("content"));
        assertEquals("t1", blocks.getJsonObject(2).getString("tool_use_id"));
    }

    @Test
    void denyModeRefusesImagesWithThePlaceholderSentence() {
        HttpRequestResult r = eval(OPENAI, new PrivacyGuardConfig(PrivacyGuardConfig.ImageMode.DENY,
                PrivacyGuardConfig.PiiMode.REDACT));
        assertEquals(Decision.DECISION_DENY, r.getDecision());
        assertEquals("image_upload_disabled", r.getReasonCode());
        assertEquals(ChatInspector.IMAGE_PLACEHOLDER, r.getReason());
        assertFalse(r.getHasBody());
        assertEquals(2, findings(r).get("content.image"));
    }

    @Test
    void allowModesKeepEverythingButStillReportIt() {
        HttpRequestResult r = eval(OPENAI, new PrivacyGuardConfig(PrivacyGuardConfig.ImageMode.ALLOW,
                PrivacyGuardConfig.PiiMode.ALLOW));
        assertEquals(Decision.DECISION_ALLOW, r.getDecision());
        assertFalse(r.getHasBody());
        assertEquals(0, r.getHeaderMutationsCount());
        assertEquals(Map.of("content.image", 2, "pii.email", 1, "pii.phone", 1), findings(r));
        assertEquals("restricted", r.getMetadataOrThrow("sensitivity"));
    }

    @Test
    void aBodyThatIsNotJsonPassesUntouchedWithAFinding() {
        for (String body : new String[] {"not json at all a@b.example", "{\"messages\": [", "\u00ff\u00fe"}) {
            HttpRequestResult r = eval(body, PrivacyGuardConfig.DEFAULT);
            assertEquals(Decision.DECISION_ALLOW, r.getDecision());
            assertFalse(r.getHasBody());
            assertEquals(Map.of("content.not_json", 1), findings(r), body);
            assertEquals("unknown", r.getMetadataOrThrow("modalities"));
        }
        HttpRequestResult bad = PrivacyGuardService.evaluate(new byte[] {(byte) 0xc3, 0x28}, PrivacyGuardConfig.DEFAULT);
        assertEquals(Map.of("content.not_json", 1), findings(bad));
    }

    @Test
    void duplicateKeysAreDeniedUnlessEverythingIsAllowed() {
        String dup = "{\"messages\":[{\"role\":\"user\",\"content\":\"a@b.example\"}],\"messages\":[]}";
        HttpRequestResult r = eval(dup, PrivacyGuardConfig.DEFAULT);
        assertEquals(Decision.DECISION_DENY, r.getDecision());
        assertEquals("ambiguous_json", r.getReasonCode());
        HttpRequestResult open = eval(dup, new PrivacyGuardConfig(PrivacyGuardConfig.ImageMode.ALLOW,
                PrivacyGuardConfig.PiiMode.ALLOW));
        assertEquals(Decision.DECISION_ALLOW, open.getDecision());
        assertEquals(Map.of("content.duplicate_keys", 1), findings(open));
    }

    @Test
    void emptyAndUnrecognizedBodiesAreNotInspected() {
        HttpRequestResult empty = eval("", PrivacyGuardConfig.DEFAULT);
        assertEquals(Map.of(), findings(empty));
        assertEquals("none", empty.getMetadataOrThrow("modalities"));
        HttpRequestResult other = eval("{\"input\":\"a@b.example\"}", PrivacyGuardConfig.DEFAULT);
        assertEquals(Map.of("content.unrecognized_format", 1), findings(other));
        assertFalse(other.getHasBody());
        HttpRequestResult array = eval("[1,2]", PrivacyGuardConfig.DEFAULT);
        assertEquals(Map.of("content.unrecognized_format", 1), findings(array));
    }

    @Test
    void aCleanRequestIsAllowedUnchanged() {
        HttpRequestResult r = eval("{\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}]}",
                PrivacyGuardConfig.DEFAULT);
        assertEquals(Decision.DECISION_ALLOW, r.getDecision());
        assertFalse(r.getHasBody());
        assertEquals(Map.of(), findings(r));
        assertEquals(Map.of("modalities", "text", "sensitivity", "none"), r.getMetadataMap());
    }

    @Test
    void configAcceptsTheDocumentedKeysOnly() {
        assertEquals(PrivacyGuardConfig.DEFAULT, PrivacyGuardConfig.parse(Struct.getDefaultInstance()));
        assertEquals(new PrivacyGuardConfig(PrivacyGuardConfig.ImageMode.DENY, PrivacyGuardConfig.PiiMode.ALLOW),
                PrivacyGuardConfig.parse(struct(Map.of("images", "deny", "pii", "allow"))));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PrivacyGuardConfig.parse(struct(Map.of("images", "blur"))))
                .getMessage().contains("'images' must be one of: redact, deny, allow"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> PrivacyGuardConfig.parse(struct(Map.of("pii", "deny")))).getMessage().contains("'pii'"));
        assertThrows(IllegalArgumentException.class, () -> PrivacyGuardConfig.parse(struct(Map.of("images", ""))));
        assertThrows(IllegalArgumentException.class, () -> PrivacyGuardConfig.parse(struct(Map.of("Images", "deny"))));
        assertThrows(IllegalArgumentException.class, () -> PrivacyGuardConfig.parse(Struct.newBuilder()
                .putFields("images", Value.newBuilder().setBoolValue(true).build()).build()));
        String msg = assertThrows(IllegalArgumentException.class,
                () -> PrivacyGuardConfig.parse(struct(Map.of("\u001b[2J", "x")))).getMessage();
        assertFalse(msg.contains("\u001b"), msg);
    }

    private static Struct struct(Map<String, String> m) {
        Struct.Builder b = Struct.newBuilder();
        m.forEach((k, v) -> b.putFields(k, Value.newBuilder().setStringValue(v).build()));
        return b.build();
    }

    /** A server-side observer that records what the service sends; {@code cancelled} is what the call reports. */
    private static final class Recording extends ServerCallStreamObserver<HttpRequestResult> {
        final List<String> sent = new ArrayList<>();
        private final boolean cancelled;

        Recording(boolean cancelled) {
            this.cancelled = cancelled;
        }

        @Override public boolean isCancelled() { return cancelled; }
        @Override public void setOnCancelHandler(Runnable onCancelHandler) { }
        @Override public void setCompression(String compression) { }
        @Override public boolean isReady() { return true; }
        @Override public void setOnReadyHandler(Runnable onReadyHandler) { }
        @Override public void request(int count) { }
        @Override public void setMessageCompression(boolean enable) { }
        @Override public void disableAutoInboundFlowControl() { }
        @Override public void onNext(HttpRequestResult value) { sent.add("next"); }
        @Override public void onError(Throwable t) { sent.add("error"); }
        @Override public void onCompleted() { sent.add("completed"); }
    }

    @Test
    void aCallTheClientCancelledWhileTheBodyWasInspectedGetsNoAnswer() {
        HttpRequestEvaluation request = HttpRequestEvaluation.newBuilder().setBindingId(PrivacyGuardService.BINDING_ID)
                .setPhase(SupervisorMiddlewarePhase.SUPERVISOR_MIDDLEWARE_PHASE_PRE_CREDENTIALS)
                .setBody(com.google.protobuf.ByteString.copyFromUtf8(OPENAI)).build();
        Recording cancelled = new Recording(true);
        new PrivacyGuardService().evaluateHttpRequest(request, cancelled);
        assertEquals(List.of(), cancelled.sent);
        Recording live = new Recording(false);
        new PrivacyGuardService().evaluateHttpRequest(request, live);
        assertEquals(List.of("next", "completed"), live.sent);
    }
}
