package dev.openshell.supervisor.audit;

import dev.openshell.middleware.spi.internal.StageResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Every event kind the supervisor emits, validated against the OCSF schema files in the shared conformance data. */
class OcsfEventsTest {
    private static final OcsfSchema SCHEMA = new OcsfSchema();
    private static final Clock CLOCK = Clock.fixed(Instant.parse("2026-11-29T12:00:00Z"), ZoneOffset.UTC);
    private static final OcsfEvents EVENTS = new OcsfEvents("0.1.0", "sandbox-host", CLOCK);
    private static final RequestFacts REQUEST = new RequestFacts("req-1", "POST", "https", "api.openai.com", 443,
            Optional.of("openai"));

    private static StageOutcome stage(StageResult result) {
        return new StageOutcome("secrets", "openshell/regex", result, result == StageResult.ALLOWED,
                1_500_000, result == StageResult.ALLOWED ? Optional.empty()
                : Optional.of("middleware_timeout"), result != StageResult.BYPASSED);
    }

    @ParameterizedTest
    @EnumSource(StageResult.class)
    void httpActivityForEveryStageResult(StageResult result) {
        JsonObject e = EVENTS.httpActivity(REQUEST, stage(result));
        SCHEMA.validate("http_activity", e);
        boolean allowed = result == StageResult.ALLOWED || result == StageResult.BYPASSED;
        assertEquals(allowed ? 1 : 3, e.getInt("severity_id"), "Informational for allow, Medium for deny");
        assertEquals(400206, e.getJsonNumber("type_uid").longValue());
        JsonObject os = e.getJsonObject("unmapped").getJsonObject("openshell");
        assertEquals("secrets", os.getString("config_key"));
        assertEquals("openshell/regex", os.getString("binding_id"));
        assertEquals(1500, os.getInt("latency_us"));
    }

    @ParameterizedTest
    @EnumSource(StageResult.class)
    void aResponseStageIsAnHttpActivityWithTheResponseStatusAndThePhase(StageResult result) {
        JsonObject e = EVENTS.httpActivity(REQUEST, stage(result), 200);
        SCHEMA.validate("http_activity", e);
        assertEquals(200, e.getJsonObject("http_response").getInt("code"));
        assertEquals("pre_return", e.getJsonObject("unmapped").getJsonObject("openshell").getString("phase"));
        JsonObject request = EVENTS.httpActivity(REQUEST, stage(result));
        assertEquals(false, request.containsKey("http_response"), "a request stage has no response status");
    }

    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"allow", "audit", "deny"})
    void anL7DecisionIsOneHttpActivityNamingPolicyEngineRuleAndCanonicalPath(String decision) {
        JsonObject e = EVENTS.l7Decision(REQUEST, new OcsfEvents.L7Outcome(decision, false,
                decision.equals("deny") ? 403 : 200, "rest", "l7", "github_api", Optional.of("GET /repos/**"),
                "POST /repos/x not permitted by policy", "/repos/x", Optional.empty(), Optional.empty()));
        SCHEMA.validate("http_activity", e);
        assertEquals(switch (decision) {
            case "allow" -> 1;
            case "audit" -> 2;
            default -> 3;
        }, e.getInt("severity_id"), "Informational, Low, Medium");
        assertEquals(decision.equals("deny") ? "Denied" : "Allowed", e.getString("action"));
        JsonObject rule = e.getJsonObject("firewall_rule");
        assertEquals("github_api", rule.getString("uid"));
        assertEquals("l7", rule.getString("type"));
        assertEquals("l7 " + decision + ": POST /repos/x not permitted by policy", e.getString("message"),
                "the engine once, then the decision and reason (attacker pass, P9-9: was \"l7 l7 ...\")");
        assertEquals("l7-graphql deny: x", EVENTS.l7Decision(REQUEST, new OcsfEvents.L7Outcome("deny", false, 403,
                "graphql", "l7-graphql", "p", Optional.empty(), "x", "/x", Optional.empty(), Optional.empty()))
                .getString("message"));
        assertEquals("GET /repos/**", rule.getString("name"), "the rule as written, globs kept");
        assertEquals("/repos/x", e.getJsonObject("http_request").getJsonObject("url").getString("path"));
        JsonObject os = e.getJsonObject("unmapped").getJsonObject("openshell");
        assertEquals(decision, os.getString("decision"));
        assertEquals("l7", os.getString("layer"));
        assertEquals("rest", os.getString("protocol"));
    }

    @Test
    void anL7PathWithControlBytesIsKeptPrintable() {
        JsonObject e = EVENTS.l7Decision(REQUEST, new OcsfEvents.L7Outcome("deny", true, 400, "rest", "l7", "p",
                Optional.empty(), "invalid request-target", "/a\u0000\n\u00e9", Optional.of("secrets"), Optional.empty()));
        assertEquals("/a___", e.getJsonObject("http_request").getJsonObject("url").getString("path"));
        JsonObject os = e.getJsonObject("unmapped").getJsonObject("openshell");
        assertTrue(os.getBoolean("hard_deny"));
        assertEquals("secrets", os.getString("after_config_key"));
    }

    /**
     * One L7 event per exchange (issue 41): the re-checks of replaced bodies that agreed with the decision are listed
     * in its event, by config key, in chain order; an event that records none has no such member.
     */
    @Test
    void anL7DecisionListsTheAgreeingRechecksItRecords() {
        JsonObject e = EVENTS.l7Decision(REQUEST, new OcsfEvents.L7Outcome("allow", false, 200, "rest", "l7", "p",
                Optional.of("POST /v1/**"), "allowed", "/v1/x", Optional.empty(), Optional.empty(),
                List.of("secrets", "pii\n")));
        SCHEMA.validate("http_activity", e);
        JsonObject os = e.getJsonObject("unmapped").getJsonObject("openshell");
        assertEquals(List.of("secrets", "pii_"), os.getJsonArray("rechecked_after_config_keys")
                .getValuesAs(jakarta.json.JsonString::getString));
        assertFalse(os.containsKey("after_config_key"));
        assertEquals("POST /v1/**", os.getString("rule"));
        assertFalse(EVENTS.l7Decision(REQUEST, new OcsfEvents.L7Outcome("allow", false, 200, "rest", "l7", "p",
                Optional.empty(), "x", "/x", Optional.empty(), Optional.empty())).getJsonObject("unmapped")
                .getJsonObject("openshell").containsKey("rechecked_after_config_keys"));
    }

    @Test
    void eventUidsAreDistinctVersion4Uuids() {
        java.util.Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i < 1000; i++) {
            JsonObject e = EVENTS.httpActivity(REQUEST, stage(StageResult.ALLOWED));
            String uid = e.getJsonObject("metadata").getString("uid");
            java.util.UUID u = java.util.UUID.fromString(uid);
            assertEquals(4, u.version(), uid);
            assertEquals(2, u.variant(), uid);
            assertEquals(uid, u.toString(), "canonical lowercase form");
            assertTrue(seen.add(uid), "unique: " + uid);
        }
        JsonObject f = EVENTS.middlewareFinding(REQUEST, "secrets", "openshell/regex", "secret.openai_api_key", 1);
        assertEquals(4, java.util.UUID.fromString(f.getJsonObject("finding_info").getString("uid")).version());
    }

    @Test
    void unknownMethodsAreOther() {
        JsonObject e = EVENTS.httpActivity(new RequestFacts("r", "PROPFIND", "http", "h", 80, Optional.empty()),
                stage(StageResult.ALLOWED));
        SCHEMA.validate("http_activity", e);
        assertEquals(99, e.getInt("activity_id"));
    }

    static Stream<Arguments> findings() {
        return Stream.of(
                Arguments.of("fail_closed failure", EVENTS.stageFailure(REQUEST, stage(StageResult.FAILED_CLOSED)), 4),
                Arguments.of("fail_open bypass", EVENTS.stageFailure(REQUEST, stage(StageResult.BYPASSED)), 3),
                Arguments.of("uninspectable, denied", EVENTS.uninspectable(REQUEST, List.of("a", "b"), true,
                        "body_over_capacity"), 4),
                Arguments.of("uninspectable, relayed", EVENTS.uninspectable(REQUEST, List.of("a"), false,
                        "body_over_capacity"), 3),
                Arguments.of("body policy failure", EVENTS.bodyPolicyFailure(REQUEST, "secrets", "openshell/regex",
                        "body_policy_unparseable"), 4),
                Arguments.of("binary integrity violation", EVENTS.binaryIntegrityViolation(REQUEST, 42,
                        "/usr/bin/curl", "a".repeat(64), "b".repeat(64)), 4),
                Arguments.of("response scrubbed", EVENTS.responseScrubbed(REQUEST, List.of("API_TOKEN"), 2, 1), 4),
                Arguments.of("response uninspectable, refused", EVENTS.responseUninspectable(REQUEST,
                        "response_uninspectable", false), 4),
                Arguments.of("response uninspectable, relayed", EVENTS.responseUninspectable(REQUEST,
                        "response_uninspectable", true), 3),
                Arguments.of("response fields unreadable", EVENTS.responseFieldsUnreadable(REQUEST,
                        List.of("content-disposition", "link")), 3),
                Arguments.of("middleware finding", EVENTS.middlewareFinding(REQUEST, "secrets", "openshell/regex",
                        "secret.openai_api_key", 2), 1),
                Arguments.of("connection re-identified", EVENTS.connectionReidentified(REQUEST, 42, "/usr/bin/curl",
                        "identified"), 3),
                Arguments.of("binding unavailable", EVENTS.bindingAvailability("acme/spin", false, 2, 2), 4),
                Arguments.of("binding available again", EVENTS.bindingAvailability("acme/spin", true, 1, 2), 1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("findings")
    void detectionFindings(String what, JsonObject e, int severity) {
        SCHEMA.validate("detection_finding", e);
        assertEquals(severity, e.getInt("severity_id"), what);
        assertEquals(severity == 4, e.getBoolean("is_alert"));
    }

    /** Fields dropped as unreadable: one finding naming the fields, never a value; control characters cleaned. */
    @Test
    void responseFieldsUnreadableNamesTheFieldsOnly() {
        JsonObject e = EVENTS.responseFieldsUnreadable(REQUEST, List.of("content-disposition", "x-a\u0001"));
        SCHEMA.validate("detection_finding", e);
        JsonObject os = e.getJsonObject("unmapped").getJsonObject("openshell");
        assertEquals("response_field_unreadable", os.getString("code"));
        assertEquals("drop", os.getString("decision"));
        assertEquals("content-disposition", os.getJsonArray("fields").getString(0));
        assertTrue(os.getJsonArray("fields").getString(1).chars().noneMatch(c -> c < 0x20), e.toString());
        assertEquals("credential.response_field_unreadable", e.getJsonObject("finding_info").getJsonArray("types")
                .getString(0));
    }

    @ParameterizedTest
    @EnumSource(ConfigChange.class)
    void configStateChanges(ConfigChange change) {
        for (boolean ok : new boolean[] {true, false}) {
            JsonObject e = EVENTS.configChange(change, ok, "policy.yaml", "2 middleware configs");
            SCHEMA.validate("device_config_state_change", e);
            assertEquals(ok ? 1 : 2, e.getInt("status_id"));
        }
        assertEquals(2, EVENTS.configChange(ConfigChange.INSECURE_REGISTRATION, true, "anonymizer", "")
                .getInt("security_level_id"), "an insecure registration is At Risk");
        assertEquals(2, EVENTS.configChange(ConfigChange.BINARY_SCOPING_OFF, true, "gateway.toml", "")
                .getInt("security_level_id"), "binary scoping off is At Risk");
    }

    @Test
    void eventsCarryTheIdentifiedProcessAsTheActor() {
        RequestFacts r = new RequestFacts("req-2", "GET", "https", "api.github.com", 443, Optional.of("gh"),
                Optional.of(new ProcessFacts(4242, "/usr/bin/git", "c".repeat(64),
                        List.of("/usr/bin/bash", "/sbin/init"), 4200)));
        JsonObject activity = EVENTS.httpActivity(r, stage(StageResult.ALLOWED));
        SCHEMA.validate("http_activity", activity);
        JsonObject p = activity.getJsonObject("actor").getJsonObject("process");
        assertEquals(4242, p.getInt("pid"));
        assertEquals("/usr/bin/git", p.getJsonObject("file").getString("path"));
        assertEquals("git", p.getJsonObject("file").getString("name"));
        assertEquals("SHA-256", p.getJsonObject("file").getJsonArray("hashes").getJsonObject(0).getString("algorithm"));
        assertEquals("c".repeat(64),
                p.getJsonObject("file").getJsonArray("hashes").getJsonObject(0).getString("value"));
        assertEquals(List.of("/sbin/init", "/usr/bin/bash", "/usr/bin/git"),
                p.getJsonArray("lineage").getValuesAs(jakarta.json.JsonString::getString),
                "oldest ancestor first, the process last (OCSF's example order)");
        assertEquals(4200, p.getJsonObject("parent_process").getInt("pid"));
        assertEquals("/usr/bin/bash", p.getJsonObject("parent_process").getJsonObject("file").getString("path"));
        JsonObject finding = EVENTS.middlewareFinding(r, "secrets", "openshell/regex", "secret.x", 1);
        SCHEMA.validate("detection_finding", finding);
        assertEquals(4242, finding.getJsonObject("actor").getJsonObject("process").getInt("pid"));
        assertFalse(EVENTS.httpActivity(REQUEST, stage(StageResult.ALLOWED)).containsKey("actor"),
                "no actor when the process is not known");
    }

    @Test
    void anEventCarriesItsOwnProcesssActorWhetherRenderedOrKept() {
        OcsfEvents events = new OcsfEvents("1.2.3", "host-a", Clock.systemUTC());
        int processes = 1500; // each pass renders some members and takes others from the cache
        for (int round = 0; round < 2; round++) {
            for (int pid = 1; pid <= processes; pid++) {
                RequestFacts r = new RequestFacts("req-" + pid, "POST", "https", "api.example", 443, Optional.empty(),
                        Optional.of(new ProcessFacts(pid, "/usr/bin/tool" + pid, Integer.toHexString(pid).repeat(64)
                                .substring(0, 64), List.of("/usr/bin/sh" + pid), pid + 100_000L)));
                JsonObject e = pid % 2 == 0 ? events.httpActivity(r, stage(StageResult.ALLOWED))
                        : events.middlewareFinding(r, "secrets", "openshell/regex", "secret.x", 1);
                JsonObject p = e.getJsonObject("actor").getJsonObject("process");
                assertEquals(pid, p.getInt("pid"));
                assertEquals("/usr/bin/tool" + pid, p.getJsonObject("file").getString("path"));
                assertEquals(List.of("/usr/bin/sh" + pid, "/usr/bin/tool" + pid),
                        p.getJsonArray("lineage").getValuesAs(jakarta.json.JsonString::getString));
                assertEquals(pid + 100_000, p.getJsonObject("parent_process").getInt("pid"));
                assertEquals("req-" + pid, e.getJsonObject("unmapped").getJsonObject("openshell")
                        .getString("request_id"), "the members after the spliced actor are the event's own");
            }
        }
    }

    @Test
    void aProcesssActorIsKeptUnlessItIsHuge() {
        OcsfEvents events = new OcsfEvents("1.2.3", "host-a", Clock.systemUTC());
        ProcessFacts small = new ProcessFacts(7, "/usr/bin/git", "e".repeat(64), List.of("/usr/bin/bash"), 6);
        ProcessFacts huge = new ProcessFacts(8, "/opt/" + "x".repeat(4000), "f".repeat(64),
                java.util.Collections.nCopies(10, "/opt/" + "y".repeat(4000)), 6);
        for (ProcessFacts p : List.of(small, huge)) {
            JsonObject e = events.httpActivity(new RequestFacts("r", "GET", "https", "h", 443, Optional.empty(),
                    Optional.of(p)), stage(StageResult.ALLOWED));
            assertEquals(p.pid(), e.getJsonObject("actor").getJsonObject("process").getInt("pid"));
        }
        assertTrue(events.actors.getIfPresent(small) != null, "a typical member is kept");
        assertTrue(events.actors.getIfPresent(huge) == null, "a member of 44,000 characters is not");
    }

    @Test
    void aHostilePathIsKeptPrintable() {
        RequestFacts r = new RequestFacts("req-3", "GET", "https", "h", 443, Optional.empty(),
                Optional.of(new ProcessFacts(1, "/tmp/\"x\n\u0000y", "d".repeat(64), List.of(), 0)));
        JsonObject p = EVENTS.httpActivity(r, stage(StageResult.ALLOWED)).getJsonObject("actor")
                .getJsonObject("process");
        assertEquals("/tmp/_x__y", p.getJsonObject("file").getString("path"));
        assertFalse(p.containsKey("parent_process"));
    }

    @Test
    void anIntegrityViolationNamesBothHashes() {
        JsonObject f = EVENTS.binaryIntegrityViolation(REQUEST, 42, "/usr/bin/curl", "a".repeat(64), "b".repeat(64));
        JsonObject os = f.getJsonObject("unmapped").getJsonObject("openshell");
        assertEquals("binary_integrity_violation", os.getString("code"));
        assertEquals("a".repeat(64), os.getString("trusted_sha256"));
        assertEquals("b".repeat(64), os.getString("observed_sha256"));
        assertEquals("/usr/bin/curl", f.getJsonObject("actor").getJsonObject("process").getJsonObject("file")
                .getString("path"));
        assertTrue(f.getBoolean("is_alert"));
    }

    @Test
    void aReidentifiedConnectionNamesTheProcessItWasIdentifiedAs() {
        JsonObject f = EVENTS.connectionReidentified(REQUEST, 42, "/usr/bin/curl", "identified");
        JsonObject os = f.getJsonObject("unmapped").getJsonObject("openshell");
        assertEquals("connection_reidentified", os.getString("code"));
        assertEquals("reidentified", os.getString("decision"));
        assertEquals(42, os.getInt("previous_pid"));
        assertEquals("/usr/bin/curl", os.getString("previous_binary"));
        assertEquals("identified", os.getString("identity"));
        assertEquals("process.connection_reidentified", f.getJsonObject("finding_info").getJsonArray("types")
                .getString(0));
        assertFalse(f.getBoolean("is_alert"));
    }

    /** A custom method is the agent's token: written in the safe form of agent-chosen names (attacker pass 4, A1b). */
    @Test
    void aCustomMethodIsWrittenInItsSafeForm() {
        RequestFacts key = new RequestFacts("r", "AKIAQWERTYUIOP0017ZX", "https", "h", 443, Optional.empty());
        for (JsonObject e : List.of(EVENTS.l7Decision(key, new OcsfEvents.L7Outcome("deny", false, 403, "rest", "l7",
                "p", Optional.empty(), "x", "/x", Optional.empty(), Optional.empty())), EVENTS.httpActivity(key,
                stage(StageResult.ALLOWED)), EVENTS.requestRefused(key, "credential_unknown", "d"))) {
            SCHEMA.validate("http_activity", e);
            assertEquals("[redacted]", e.getJsonObject("http_request").getString("http_method"));
            assertFalse(e.toString().contains("AKIAQWERTYUIOP0017ZX"), e.toString());
        }
        RequestFacts custom = new RequestFacts("r", "PROPFIND", "https", "h", 443, Optional.empty());
        assertEquals("PROPFIND", EVENTS.httpActivity(custom, stage(StageResult.ALLOWED))
                .getJsonObject("http_request").getString("http_method"));
        assertEquals("X?Y", EventMembers.httpMethod("X\u00e9Y"));
        assertEquals("GET", EventMembers.httpMethod("GET"));
        assertEquals("A".repeat(64) + "...", EventMembers.httpMethod("A".repeat(70)));
    }

    @Test
    void anL7RefusalCarriesItsCode() {
        JsonObject e = EVENTS.l7Decision(REQUEST, new OcsfEvents.L7Outcome("deny", true, 400, "rest", "l7", "p",
                Optional.empty(), "method override", "/repos/x", Optional.empty(), Optional.of("method_override")));
        SCHEMA.validate("http_activity", e);
        assertEquals("method_override", e.getJsonObject("unmapped").getJsonObject("openshell").getString("code"));
        assertFalse(EVENTS.l7Decision(REQUEST, new OcsfEvents.L7Outcome("deny", true, 400, "rest", "l7", "p",
                Optional.empty(), "x", "/x", Optional.empty(), Optional.empty())).getJsonObject("unmapped")
                .getJsonObject("openshell")
                .containsKey("code"));
    }

    @Test
    void theValidatorRejectsWhatTheSchemaForbids() {
        JsonObject good = EVENTS.httpActivity(REQUEST, stage(StageResult.ALLOWED));
        assertThrows(AssertionError.class, () -> SCHEMA.validate("http_activity",
                Json.createObjectBuilder(good).remove("metadata").build()), "missing required attribute");
        assertThrows(AssertionError.class, () -> SCHEMA.validate("http_activity",
                Json.createObjectBuilder(good).add("severity_id", 7).build()), "enum value not in the schema");
        assertThrows(AssertionError.class, () -> SCHEMA.validate("http_activity",
                Json.createObjectBuilder(good).add("severity", "High").build()), "caption disagrees with its id");
        assertThrows(AssertionError.class, () -> SCHEMA.validate("http_activity",
                Json.createObjectBuilder(good).add("not_an_ocsf_attribute", 1).build()), "unknown attribute");
        assertThrows(AssertionError.class, () -> SCHEMA.validate("http_activity",
                Json.createObjectBuilder(good).add("type_uid", 400201).build()), "type_uid arithmetic");
        assertThrows(AssertionError.class, () -> SCHEMA.validate("detection_finding", good), "wrong class");
    }

    @Test
    void identifiersAreKeptPrintableAndShort() {
        assertEquals("a_b_c", EventMembers.safeText("a\nb\"c", 10));
        assertEquals("abc", EventMembers.safeText("abcdef", 3));
        assertEquals("generation 2: 1 network policy, 3 middleware configs (0 after credential injection); "
                + "bindings: 1 external", EventMembers.safeDetail("generation 2: 1 network policy, 3 middleware configs "
                + "(0 after credential injection); bindings: 1 external", 500), "prose keeps its punctuation");
        assertEquals("a b?c", EventMembers.safeDetail("a\nb\u00e9c", 10));
        assertEquals("ab", EventMembers.safeDetail("abc", 2));
        JsonObject e = EVENTS.configChange(ConfigChange.POLICY_VALIDATION, false, "x\r\ny", "z\u0000");
        assertFalse(e.toString().contains("\\r") || e.toString().contains("\\u0000"), e.toString());
    }
}
