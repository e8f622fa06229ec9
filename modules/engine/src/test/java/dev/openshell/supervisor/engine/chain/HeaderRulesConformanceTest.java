package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.HeaderTable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every vector and error string of {@code tests/data/conformance/header_rules.txt}, read from the file itself so the
 * tests follow it.
 */
class HeaderRulesConformanceTest {
    private static List<String> lines;

    @BeforeAll
    static void read() throws IOException {
        Path file = Path.of(System.getProperty("supervisor.testdata", "../../tests/data"), "conformance",
                "header_rules.txt");
        lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    }

    private static List<String> section(String number) {
        int from = -1;
        int to = lines.size();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("## " + number + ".")) {
                from = i + 1;
            } else if (from >= 0 && lines.get(i).startsWith("## ")) {
                to = i;
                break;
            }
        }
        assertTrue(from >= 0, "section " + number + " missing");
        return lines.subList(from, to);
    }

    // ------------------------------------------------------------------ section 1: protected names

    @TestFactory
    List<DynamicTest> everyListedNameIsProtectedWithItsClass() {
        List<DynamicTest> tests = new ArrayList<>();
        Pattern row = Pattern.compile("^([a-z0-9*-]+)\\s+(credential|routing|framing|hop-by-hop)\\b.*");
        for (String line : section("1")) {
            Matcher m = row.matcher(line);
            if (!m.matches()) {
                continue;
            }
            String name = m.group(1);
            HeaderTable.Kind expected = switch (m.group(2)) {
                case "credential" -> HeaderTable.Kind.CREDENTIAL;
                case "routing" -> HeaderTable.Kind.ROUTING;
                case "framing" -> HeaderTable.Kind.FRAMING;
                default -> HeaderTable.Kind.HOP_BY_HOP;
            };
            tests.add(DynamicTest.dynamicTest(name, () -> {
                if (name.endsWith("*")) {
                    String prefix = name.substring(0, name.length() - 1);
                    for (String n : List.of(prefix, prefix + "date", prefix + "-Security-Token".toUpperCase())) {
                        assertEquals(expected, HeaderRules.protection(n).orElseThrow(), n);
                    }
                } else {
                    assertEquals(expected, HeaderRules.protection(name).orElseThrow());
                    assertEquals(expected, HeaderRules.protection(name.toUpperCase()).orElseThrow());
                }
            }));
        }
        assertEquals(15, tests.size(), "13 exact names and 2 prefixes in the file");
        return tests;
    }

    @Test
    void namesTheFileSaysAreNotProtected() {
        for (String name : List.of("set-cookie", "x-api-key", "api-key", "accept", "x-amz", "x-openshell-middleware-x")) {
            assertFalse(HeaderRules.isProtected(name), name);
        }
    }

    // ------------------------------------------------------------------ section 2: input filter vectors

    @TestFactory
    List<DynamicTest> inputFilterVectors() {
        List<DynamicTest> tests = new ArrayList<>();
        List<String> s2 = section("2");
        Pattern in = Pattern.compile("^IN\\s+\"(.*)\"\\s*$");
        Pattern out = Pattern.compile("^OUT\\s+\\[(.*)]\\s*(?:connection_nominated=\\[(.*)])?\\s*$");
        Pattern reject = Pattern.compile("^REJECT\\s+\"(.*)\"\\s+\\((.*)\\)\\s*$");
        for (int i = 0; i < s2.size(); i++) {
            Matcher mi = in.matcher(s2.get(i));
            if (mi.matches()) {
                String raw = unescape(mi.group(1));
                Matcher mo = out.matcher(s2.get(i + 1));
                assertTrue(mo.matches(), "OUT line after IN on line " + i);
                List<HttpHeader> expected = pairs(mo.group(1));
                List<String> nominated = mo.group(2) == null ? null : strings(mo.group(2));
                tests.add(DynamicTest.dynamicTest("IN " + expected, () -> {
                    List<HttpHeader> parsed = HeaderRules.parseFieldLines(headerSection(raw));
                    Set<String> nom = HeaderRules.connectionNominated(parsed);
                    assertEquals(expected, HeaderRules.visible(parsed, nom));
                    if (nominated != null) {
                        assertEquals(nominated, List.copyOf(nom));
                    }
                }));
                continue;
            }
            Matcher mr = reject.matcher(s2.get(i));
            if (mr.matches()) {
                String raw = unescape(mr.group(1));
                String why = mr.group(2);
                String code = switch (why) {
                    case "obs-fold" -> "header_obs_fold";
                    case "no colon" -> "header_missing_colon";
                    case "space before colon" -> "header_whitespace_before_colon";
                    case "non-token char in name" -> "header_invalid_name";
                    default -> throw new AssertionError("unknown REJECT reason " + why);
                };
                tests.add(DynamicTest.dynamicTest("REJECT " + why, () -> {
                    MalformedHeaderException e = assertThrows(MalformedHeaderException.class,
                            () -> HeaderRules.parseFieldLines(headerSection(raw)));
                    assertEquals(code, e.code());
                    assertFalse(e.getMessage().contains("Test") || e.getMessage().contains("continued"),
                            "no header content in the message: " + e.getMessage());
                }));
            }
        }
        assertEquals(7, tests.size(), "3 IN/OUT and 4 REJECT vectors in the file");
        return tests;
    }

    private static String headerSection(String rawRequest) {
        return rawRequest.substring(rawRequest.indexOf("\r\n") + 2);
    }

    private static String unescape(String s) {
        return s.replace("\\r", "\r").replace("\\n", "\n").replace("\\\"", "\"");
    }

    private static List<HttpHeader> pairs(String s) {
        List<HttpHeader> out = new ArrayList<>();
        Matcher m = Pattern.compile("\\(\"([^\"]*)\",\"([^\"]*)\"\\)").matcher(s);
        while (m.find()) {
            out.add(new HttpHeader(m.group(1), m.group(2)));
        }
        return out;
    }

    private static List<String> strings(String s) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\"([^\"]*)\"").matcher(s);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    // ------------------------------------------------------------------ section 3: error strings and codes

    @Test
    void errorTableMatchesEveryKindExactly() {
        Pattern row = Pattern.compile("^([A-Za-z]+)\\s+\"(.*)\"\\s+([a-z_]+)\\s*$");
        Map<String, HeaderMutationError.Kind> byName = Map.ofEntries(
                Map.entry("TooMany", HeaderMutationError.Kind.TOO_MANY),
                Map.entry("InvalidName", HeaderMutationError.Kind.INVALID_NAME),
                Map.entry("Protected", HeaderMutationError.Kind.PROTECTED),
                Map.entry("HopByHop", HeaderMutationError.Kind.HOP_BY_HOP),
                Map.entry("WriteNamespace", HeaderMutationError.Kind.WRITE_NAMESPACE),
                Map.entry("UnsafeValue", HeaderMutationError.Kind.UNSAFE_VALUE),
                Map.entry("TooLarge", HeaderMutationError.Kind.TOO_LARGE),
                Map.entry("InvalidExistingAction", HeaderMutationError.Kind.INVALID_EXISTING_ACTION),
                Map.entry("MissingExistingAction", HeaderMutationError.Kind.MISSING_EXISTING_ACTION),
                Map.entry("UnsupportedExistingAction", HeaderMutationError.Kind.UNSUPPORTED_EXISTING_ACTION),
                Map.entry("Empty", HeaderMutationError.Kind.EMPTY));
        EnumSet<HeaderMutationError.Kind> seen = EnumSet.noneOf(HeaderMutationError.Kind.class);
        for (String line : section("3")) {
            Matcher m = row.matcher(line);
            if (!m.matches()) {
                continue;
            }
            HeaderMutationError.Kind kind = byName.get(m.group(1));
            assertTrue(kind != null, "unknown error " + m.group(1));
            String expected = m.group(2).replace("{count}", "65").replace("{name}", "X-Example");
            HeaderMutationError error = new HeaderMutationError(kind, "X-Example", 65);
            assertEquals(expected, error.message(), kind.name());
            assertEquals(m.group(3), error.code(), kind.name());
            seen.add(kind);
        }
        assertEquals(EnumSet.allOf(HeaderMutationError.Kind.class), seen);
    }

    // ------------------------------------------------------------------ section 4: mutation vectors

    private static final List<HttpHeader> TAG_AND_ACCEPT = List.of(
            new HttpHeader("x-openshell-middleware-tag", "one"), new HttpHeader("accept", "application/json"));

    private static MutationOutcome apply(List<HttpHeader> existing, Set<String> nominated, HeaderMutation m) {
        return new HeaderRules().apply(existing, nominated, List.of(m));
    }

    private static String error(MutationOutcome o) {
        return assertInstanceOf(MutationOutcome.Rejected.class, o).error().message();
    }

    private static List<HttpHeader> applied(MutationOutcome o) {
        return assertInstanceOf(MutationOutcome.Applied.class, o).headers();
    }

    @Test
    void v1WriteAuthorizationIsProtected() {
        assertTrue(error(apply(List.of(), Set.of(), HeaderMutation.write("Authorization", "Bearer nope",
                ExistingHeaderAction.OVERWRITE))).contains("protected header 'Authorization'"));
    }

    @Test
    void v2CrLfInjectionIsAnUnsafeValue() {
        assertTrue(error(apply(List.of(), Set.of(), HeaderMutation.write("x-openshell-middleware-inject",
                "ok\r\nAuthorization: Bearer evil", ExistingHeaderAction.APPEND))).contains("unsafe value"));
    }

    @Test
    void v3AppendAddsAtTheEnd() {
        assertEquals(List.of(new HttpHeader("x-openshell-middleware-tag", "one"),
                        new HttpHeader("accept", "application/json"), new HttpHeader("x-openshell-middleware-tag", "two")),
                applied(apply(TAG_AND_ACCEPT, Set.of(), HeaderMutation.write("X-OpenShell-Middleware-Tag", "two",
                        ExistingHeaderAction.APPEND))));
    }

    @Test
    void v4OverwriteReplacesEveryLineAtTheEnd() {
        assertEquals(List.of(new HttpHeader("accept", "application/json"),
                        new HttpHeader("x-openshell-middleware-tag", "two")),
                applied(apply(TAG_AND_ACCEPT, Set.of(), HeaderMutation.write("X-OpenShell-Middleware-Tag", "two",
                        ExistingHeaderAction.OVERWRITE))));
    }

    @Test
    void v5SkipLeavesAnExistingHeader() {
        MutationOutcome o = apply(TAG_AND_ACCEPT, Set.of(), HeaderMutation.write("X-OpenShell-Middleware-Tag", "two",
                ExistingHeaderAction.SKIP));
        assertEquals(TAG_AND_ACCEPT, applied(o));
        assertFalse(((MutationOutcome.Applied) o).changed());
    }

    @Test
    void v6RemoveDeletesEveryLineCaseInsensitively() {
        List<HttpHeader> existing = List.of(new HttpHeader("x-trace", "one"),
                new HttpHeader("accept", "application/json"), new HttpHeader("x-trace", "two"));
        assertEquals(List.of(new HttpHeader("accept", "application/json")),
                applied(apply(existing, Set.of(), HeaderMutation.remove("X-Trace"))));
    }

    @Test
    void v7RemovingAnInvisibleProtectedHeaderIsStillRejected() {
        assertTrue(error(apply(List.of(), Set.of(), HeaderMutation.remove("Authorization")))
                .contains("protected header 'Authorization'"));
    }

    @Test
    void v8WritingAConnectionNominatedHeaderIsHopByHop() {
        assertTrue(error(apply(List.of(), Set.of("x-openshell-middleware-tag"), HeaderMutation.write(
                "X-OpenShell-Middleware-Tag", "value", ExistingHeaderAction.APPEND)))
                .contains("hop-by-hop header 'X-OpenShell-Middleware-Tag'"));
    }

    @Test
    void v9RemovingAConnectionNominatedHeaderIsHopByHop() {
        assertTrue(error(apply(List.of(), Set.of("x-openshell-middleware-tag"),
                HeaderMutation.remove("X-OpenShell-Middleware-Tag")))
                .contains("hop-by-hop header 'X-OpenShell-Middleware-Tag'"));
    }

    @Test
    void chainReasonOnFailClosedIsMiddlewareFailedWithSafeReasonForBuiltInsAndCodeForThirdParties() {
        HeaderMutation bad = HeaderMutation.write("Authorization", "x", ExistingHeaderAction.APPEND);
        Stages.Scripted p = Stages.provider(e -> dev.openshell.middleware.spi.HttpRequestResult
                .builder(dev.openshell.middleware.spi.Decision.ALLOW).mutation(bad).build());
        ChainEngine engine = ChainEngine.builder().build();
        DenyResponse builtIn = engine.run(Stages.chain(Stages.spec("k", 1, p).build()), Stages.request("{}"))
                .denial().orElseThrow();
        assertEquals("middleware_failed: middleware cannot mutate protected header Authorization", builtIn.detail());
        assertEquals("header_mutation_protected_header", builtIn.reasonCode());
        DenyResponse external = engine.run(Stages.chain(Stages.spec("k", 1, p).thirdParty().build()),
                Stages.request("{}")).denial().orElseThrow();
        assertEquals("middleware_failed: header_mutation_protected_header", external.detail());
    }
}
