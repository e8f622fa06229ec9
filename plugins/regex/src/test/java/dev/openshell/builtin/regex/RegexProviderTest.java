package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.lang.module.ModuleDescriptor;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class RegexProviderTest {
    private static final BindingId ID = new BindingId("openshell/regex");
    private final RegexProvider provider = new RegexProvider();

    static JsonObject json(String text) {
        return Json.createReader(new StringReader(text)).readObject();
    }

    static HttpRequestResult evaluate(RegexProvider p, JsonObject config, Body body) {
        return p.evaluate(new HttpRequestEvaluation(ID, Phase.PRE_CREDENTIALS, RequestContext.of("r"), config,
                new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", ""), List.of(), body));
    }

    private HttpRequestResult redact(String text) {
        return evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, Body.ofUtf8(text));
    }

    private static String text(HttpRequestResult r) {
        return r.body().orElseThrow().utf8().orElseThrow();
    }

    private static void leaksNothing(HttpRequestResult r, String secret) {
        String probe = secret.substring(0, Math.min(16, secret.length()));
        assertFalse(r.reason().contains(probe), "reason");
        for (Finding f : r.findings()) {
            assertFalse((f.type() + f.label() + f.confidence() + f.severity()).contains(probe), "finding");
        }
        r.metadata().forEach((k, v) -> assertFalse(v.contains(probe), "metadata"));
        r.body().ifPresent(b -> assertFalse(b.utf8().orElseThrow().contains(probe), "body"));
    }

    @Test
    void theManifestDeclaresAnHttpRequestBindingTheMessageBindingsBesideItAndAnHttpResponseBinding() {
        List<MiddlewareBinding> bindings = provider.manifest().bindings();
        assertEquals(4, bindings.size());
        assertEquals(List.of(Operation.WEBSOCKET_MESSAGE, Operation.WEBSOCKET_MESSAGE),
                bindings.subList(1, 3).stream().map(MiddlewareBinding::operation).toList());
        MiddlewareBinding response = bindings.get(3);
        assertEquals(RegexProvider.RESPONSE_BINDING_ID, response.id().value());
        assertEquals(Operation.HTTP_RESPONSE, response.operation());
        assertEquals(Phase.PRE_RETURN, response.phase());
        MiddlewareBinding b = bindings.getFirst();
        assertEquals(ID, b.id());
        assertEquals(Operation.HTTP_REQUEST, b.operation());
        assertEquals(Phase.PRE_CREDENTIALS, b.phase());
        assertEquals(EnvelopeLimits.MAX_BODY_BYTES, b.maxBodyBytes());
        assertTrue(b.timeout().isEmpty());
        assertEquals(Set.of("gzip", "deflate"), b.decodedContentCodings(), "the supervisor decompresses for it");
        assertTrue(b.skipEmptyBody(), "nothing to scan in an empty body: the supervisor need not ask");
    }

    @Test
    void anEmptyBodyIsAPlainAllowAsItsManifestDeclares() {
        // skip_empty_body is a promise: the answer the supervisor no longer asks for must be a plain allow
        for (String mode : List.of("redact", "deny")) {
            HttpRequestResult r = new RegexProvider().evaluate(new HttpRequestEvaluation(ID, Phase.PRE_CREDENTIALS,
                    RequestContext.of("r"), Json.createObjectBuilder().add("mode", mode).build(),
                    new HttpRequestTarget("https", "api.example.com", 443, "GET", "/", ""),
                    List.of(new HttpHeader("content-type", "application/json")), Body.empty()));
            assertEquals(Decision.ALLOW, r.decision(), mode);
            assertTrue(r.body().isEmpty() && r.headerMutations().isEmpty() && r.findings().isEmpty()
                    && r.metadata().isEmpty() && r.reasonCode().isEmpty(), mode + ": " + r);
        }
    }

    @Test
    void theModuleDeclaresItAsItsOnlyServiceProviderAndExportsNothing() {
        ModuleDescriptor d = RegexProvider.class.getModule().getDescriptor();
        assertEquals("dev.openshell.builtin.regex", d.name());
        assertEquals(1, d.provides().size());
        ModuleDescriptor.Provides provides = d.provides().iterator().next();
        assertEquals(MiddlewareProvider.class.getName(), provides.service());
        assertEquals(List.of(RegexProvider.class.getName()), provides.providers());
        assertEquals(Set.of(), d.exports());
    }

    @ParameterizedTest
    @MethodSource("legacyIds")
    void eachKindIsRedactedWithItsLabelledPlaceholder(String kind) {
        String secret = Samples.ONE_OF_EACH.get(kind);
        HttpRequestResult r = redact("{\"prompt\":\"use " + secret + " now\"}");
        assertEquals(Decision.ALLOW, r.decision());
        assertEquals("{\"prompt\":\"use [REDACTED:" + kind + "] now\"}", text(r));
        assertEquals(List.of(new Finding("secret." + kind, Catalog.get().byId(kind).label(), 1, "", "high")),
                r.findings());
        assertEquals(Map.of("action", "redacted", "matches", "1"), r.metadata());
        leaksNothing(r, secret);
    }

    static List<String> legacyIds() {
        return Samples.LEGACY_IDS;
    }

    @ParameterizedTest
    @MethodSource("legacyIds")
    void eachKindIsDeniedInDenyMode(String kind) {
        String secret = Samples.ONE_OF_EACH.get(kind);
        HttpRequestResult r = evaluate(provider, json("{\"mode\":\"deny\"}"), Body.ofUtf8("x " + secret + " y"));
        assertEquals(Decision.DENY, r.decision());
        assertEquals("secret_detected", r.reasonCode().orElseThrow());
        assertEquals("request body contains secrets: " + kind, r.reason());
        assertTrue(r.body().isEmpty());
        assertEquals(1, r.findings().getFirst().count());
        leaksNothing(r, secret);
    }

    @Test
    void findingsCountPerKindAndMetadataCountsAll() {
        String aws = Samples.ONE_OF_EACH.get("aws_access_key_id");
        String gh = Samples.ONE_OF_EACH.get("github_token");
        HttpRequestResult r = redact(aws + " " + gh + "\n" + aws + ",\"" + aws + "\"");
        assertEquals("[REDACTED:aws_access_key_id] [REDACTED:github_token]\n[REDACTED:aws_access_key_id],"
                + "\"[REDACTED:aws_access_key_id]\"", text(r));
        assertEquals(List.of(new Finding("secret.aws_access_key_id", "AWS access key ID", 3, "", "high"),
                new Finding("secret.github_token", "GitHub token", 1, "", "high")), r.findings());
        assertEquals("4", r.metadata().get("matches"));
    }

    @Test
    void aBodyWithoutSecretsIsAllowedAndKept() {
        HttpRequestResult r = redact("{\"messages\":[{\"role\":\"user\",\"content\":\"caf\u00e9 \uD83D\uDE00\"}]}");
        assertEquals(HttpRequestResult.allow(), r);
        assertTrue(r.body().isEmpty(), "no replacement: has_body is false");
        assertEquals(HttpRequestResult.allow(), redact(""));
    }

    @ParameterizedTest
    @ValueSource(strings = {"task-manager-configuration-file-with-long-name", "sk-learn-model-selection-utilities",
        "risk-sk-proj-short", "AKIAIOSFODNN7EXAMPL", "AKIAIOSFODNN7EXAMPLEX", "xAKIAIOSFODNN7EXAMPLE",
        "ghp_tooShort123", "xoxb-short", "AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsH", "-----BEGIN PUBLIC KEY-----",
        "sk-0123456789abcdef0123456789abcde", "mask-0123456789abcdef0123456789abcdef01"})
    void lookalikesAreNotSecrets(String text) {
        assertEquals(HttpRequestResult.allow(), redact("before " + text + " after"));
    }

    @Test
    void onlyTheConfiguredPatternsAreLookedFor() {
        String aws = Samples.ONE_OF_EACH.get("aws_access_key_id");
        String openai = Samples.ONE_OF_EACH.get("openai_api_key");
        HttpRequestResult r = evaluate(provider, json("{\"patterns\":[\"aws_access_key_id\"]}"),
                Body.ofUtf8(aws + " " + openai));
        assertEquals("[REDACTED:aws_access_key_id] " + openai, text(r));
        assertEquals(1, r.findings().size());
    }

    @Test
    void aNonUtf8BodyIsAFailureOfTheStageNeverAPass() {
        MiddlewareException e = assertThrows(MiddlewareException.class, () -> evaluate(provider,
                JsonObject.EMPTY_JSON_OBJECT, Body.of(new byte[] {'{', (byte) 0xC3, (byte) 0x28, '}'})));
        assertEquals("body_not_utf8", e.code());
        byte[] gzip = {(byte) 0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, (byte) 0xff};
        assertEquals("body_not_utf8", assertThrows(MiddlewareException.class,
                () -> evaluate(provider, JsonObject.EMPTY_JSON_OBJECT, Body.of(gzip))).code());
    }

    @Test
    void aPemBlockInsideJsonIsRedactedAndTheJsonStaysValid() {
        String pemJson = Samples.PEM.replace("\n", "\\n");
        String body = "{\"key\":\"" + pemJson + "\\n\",\"next\":\"AKIAIOSFODNN7EXAMPLE\"}";
        HttpRequestResult r = redact(body);
        JsonObject parsed = json(text(r));
        assertEquals("[REDACTED:private_key]\n", parsed.getString("key"));
        assertEquals("[REDACTED:aws_access_key_id]", parsed.getString("next"));
    }

    @Test
    void anUnterminatedPemBlockIsRedactedUpToTheEndOfItsKeyData() {
        String body = "x -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQUJD\n\" tail";
        assertEquals("x [REDACTED:private_key]\n\" tail", text(redact(body)));
        String escaped = "{\"k\":\"-----BEGIN PRIVATE KEY-----\\nMIIE\\\"\"}";
        JsonObject parsed = json(text(redact(escaped)));
        assertEquals("[REDACTED:private_key]\"", parsed.getString("k"), "an escaped quote is never cut in half");
    }

    @Test
    void encryptedPemHeadersAreCoveredByTheBlock() {
        String pem = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B2C\n\n"
                + "abc+/=\n-----END RSA PRIVATE KEY-----";
        assertEquals("<[REDACTED:private_key]>", text(redact("<" + pem + ">")));
    }

    @Test
    void hostileBodiesAreScannedInOnePass() {
        String begins = "-----BEGIN RSA PRIVATE KEY-----\n".repeat(32_768);
        HttpRequestResult r = redact(begins);
        assertEquals(List.of(new Finding("secret.private_key", "PEM private key block", 32_768, "", "high")),
                r.findings());
        assertEquals(HttpRequestResult.allow(), redact("sk-".repeat(300_000)));
        assertEquals(HttpRequestResult.allow(), redact("AKIA".repeat(250_000)));
        assertEquals(HttpRequestResult.allow(), redact("a".repeat(1 << 20)));
        assertEquals(HttpRequestResult.allow(), redact("-".repeat(1 << 20)));
    }

    @Test
    void aRedactionThatWouldOutgrowFourMiBFails() {
        String keys = "AKIAIOSFODNN7EXAMPLE ".repeat(EnvelopeLimits.MAX_BODY_BYTES / 21);
        MiddlewareException e = assertThrows(MiddlewareException.class, () -> redact(keys));
        assertEquals("redacted_body_over_capacity", e.code());
    }

    // ------------------------------------------------------------------ config

    @ParameterizedTest
    @ValueSource(strings = {"{}", "{\"mode\":\"redact\"}", "{\"mode\":\"deny\"}",
        "{\"patterns\":[\"openai_api_key\",\"private_key\"]}", "{\"mode\":\"deny\",\"patterns\":[\"slack_token\"]}"})
    void validConfigs(String config) {
        assertEquals(ConfigValidation.ok(), provider.validateConfig(ID, json(config)));
    }

    @Test
    void invalidConfigsSayWhichKeyAndRuleWithoutEchoingValues() {
        String list = "openshell/regex: 'patterns' must be a non-empty list of catalog entry ids and provider names "
                + "(docs/builtin-regex.md lists them)";
        Map<String, String> cases = Map.of(
                "{\"mode\":\"drop\"}", "openshell/regex: 'mode' must be \"redact\" or \"deny\"",
                "{\"mode\":1}", "openshell/regex: 'mode' must be \"redact\" or \"deny\"",
                "{\"modes\":\"deny\"}", "openshell/regex: unknown config key 'modes' (known keys: mode, patterns, "
                        + "custom_patterns)",
                "{\"patterns\":[]}", list,
                "{\"patterns\":\"aws_access_key_id\"}", list,
                "{\"patterns\":[\"aws_access_key_id\",\"s3cret-value\"]}", "openshell/regex: 'patterns' entry 2 is "
                        + "not a catalog entry id or provider name (docs/builtin-regex.md lists them)",
                "{\"patterns\":[\"github_token\",\"github_token\"]}",
                "openshell/regex: 'patterns' names 'github_token' twice");
        cases.forEach((config, message) -> {
            ConfigValidation v = provider.validateConfig(ID, json(config));
            assertFalse(v.valid(), config);
            assertEquals(message, v.reason(), config);
        });
    }

    @Test
    void anotherBindingIsRefused() {
        ConfigValidation v = provider.validateConfig(new BindingId("openshell/other"), JsonObject.EMPTY_JSON_OBJECT);
        assertEquals("openshell/regex does not serve binding 'openshell/other'", v.reason());
    }

    @Test
    void anInvalidConfigAtEvaluationIsAStageFailure() {
        MiddlewareException e = assertThrows(MiddlewareException.class,
                () -> evaluate(provider, json("{\"mode\":\"drop\"}"), Body.ofUtf8("x")));
        assertEquals("invalid_config", e.code());
        assertInstanceOf(String.class, e.getMessage());
    }

    @Test
    void theResponseBindingRedactsWholeBodiesStreamsEventStreamsAndFailsInDenyMode() {
        var stage = provider.openResponse(new dev.openshell.middleware.spi.BindingId(RegexProvider.RESPONSE_BINDING_ID));
        var target = new dev.openshell.middleware.spi.HttpRequestTarget("https", "api.test", 443, "GET", "/", "");
        var all = java.util.EnumSet.allOf(dev.openshell.middleware.spi.HttpResponseBodyMode.class);
        var pre = new dev.openshell.middleware.spi.HttpResponsePreflight(
                new dev.openshell.middleware.spi.BindingId(RegexProvider.RESPONSE_BINDING_ID),
                dev.openshell.middleware.spi.RequestContext.of("r"), target, 200,
                List.of(new dev.openshell.middleware.spi.HttpHeader("content-type", "application/json")),
                jakarta.json.Json.createObjectBuilder().add("mode", "redact").build(), 1 << 20, all, true);
        assertEquals(dev.openshell.middleware.spi.HttpResponseBodyMode.WHOLE_BODY_BYTES,
                stage.preflight(pre).bodyMode());
        var r = stage.body(new dev.openshell.middleware.spi.HttpResponseBodyUnit(1,
                dev.openshell.middleware.spi.Body.ofUtf8("{\"k\":\"AKIAIOSFODNN7EXAMPLE\"}"), true));
        assertEquals("{\"k\":\"[REDACTED:aws_access_key_id]\"}", r.replacement().orElseThrow().utf8().orElseThrow());
        assertEquals(1, r.sequence());
        var deny = provider.openResponse(new dev.openshell.middleware.spi.BindingId(RegexProvider.RESPONSE_BINDING_ID));
        var noWhole = java.util.EnumSet.of(dev.openshell.middleware.spi.HttpResponseBodyMode.HEADERS_ONLY,
                dev.openshell.middleware.spi.HttpResponseBodyMode.STREAM_BYTES);
        var denyPre = new dev.openshell.middleware.spi.HttpResponsePreflight(pre.bindingId(), pre.context(), target,
                200, List.of(), jakarta.json.Json.createObjectBuilder().add("mode", "deny").build(), 1 << 20, noWhole,
                true);
        assertEquals(dev.openshell.middleware.spi.HttpResponseBodyMode.STREAM_BYTES, deny.preflight(denyPre).bodyMode());
        var e = org.junit.jupiter.api.Assertions.assertThrows(dev.openshell.middleware.spi.MiddlewareException.class,
                () -> deny.body(new dev.openshell.middleware.spi.HttpResponseBodyUnit(1,
                        dev.openshell.middleware.spi.Body.ofUtf8("AKIAIOSFODNN7EXAMPLE"), true)));
        assertEquals(RegexProvider.DENY_CODE, e.code());
    }
}
