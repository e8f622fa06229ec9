package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpRequestResult;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The coverage tool: every true positive of {@link CatalogSamples} written the ways secrets appear in files and code
 * an agent pastes (a {@code .env} line, INI, YAML, JSON, XML, Go, Java, PHP, Python, shell, Makefile, a Java system
 * property, a Ruby hash, a JSON string holding an escaped file), each sent as the content of a chat message through the
 * stage with its default config, as an agent would send it. It prints the share of samples whose secret never reaches
 * the upstream, overall and per entry, and fails below 95 % or below 200 entries caught at least once.
 */
class CatalogCoverageTest {
    /** {@code {i}} an identifier naming the provider, {@code {I}} the same in capitals, {@code {s}} the secret. */
    static final List<String> CONTEXTS = List.of(
            "{I}_TOKEN={s}",
            "{i}Token = \"{s}\"",
            "{i}_token: {s}",
            "{i}_token: '{s}'",
            "{\n    \"{i}_token\": \"{s}\"\n}",
            "<{i}Token>\n    {s}\n</{i}Token>",
            "{i}Token := \"{s}\"",
            "{i}Token := `{s}`",
            "var {i}Token string = \"{s}\"",
            "String {i}Token = \"{s}\";",
            "${i}Token .= \"{s}\"",
            "{i}_token = '{s}'",
            "export {I}_API_KEY=\"{s}\"",
            "{I}_TOKEN ?= \"{s}\"",
            "System.setProperty(\"{I}_TOKEN\", \"{s}\")",
            "  \"{i}Token\" => \"{s}\"",
            "{\"config.ini\": \"{I}_TOKEN={s}\\nBACKUP_ENABLED=true\"}");

    record Outcome(int caught, int total) {
    }

    @Test
    void theDefaultCatalogCatchesAtLeast95PercentOfTheCollection() {
        RegexProvider provider = new RegexProvider();
        Map<String, int[]> byEntry = new TreeMap<>();
        int caught = 0;
        int total = 0;
        for (CatalogSamples.Sample s : CatalogSamples.positives()) {
            if (!s.rule().enabledByDefault() || s.rule().kind() == Rule.Kind.PEM) {
                continue;
            }
            String identifier = identifier(s);
            for (String context : CONTEXTS) {
                String text = context.replace("{i}", identifier).replace("{I}", identifier.toUpperCase(Locale.ROOT))
                        .replace("{s}", s.secret());
                boolean ok = redacted(provider, text, s.secret());
                int[] e = byEntry.computeIfAbsent(s.id(), k -> new int[2]);
                e[0] += ok ? 1 : 0;
                e[1]++;
                caught += ok ? 1 : 0;
                total++;
            }
        }
        List<String> weak = new ArrayList<>();
        long entriesCaught = byEntry.values().stream().filter(e -> e[0] > 0).count();
        byEntry.forEach((id, e) -> {
            if (e[0] < e[1]) {
                weak.add(id + " " + e[0] + "/" + e[1]);
            }
        });
        double share = 100.0 * caught / total;
        System.out.printf(Locale.ROOT, "catalog coverage: %d of %d samples in context caught (%.1f %%); %d of %d "
                + "entries caught at least once; below 100 %%: %s%n", caught, total, share, entriesCaught,
                byEntry.size(), weak);
        assertTrue(share >= 95, "coverage " + share + " %: " + weak);
        assertTrue(entriesCaught >= 200, "entries caught: " + entriesCaught);
    }

    /** The provider's name as a key names it: the keyword of a keyword entry, else the provider id. */
    private static String identifier(CatalogSamples.Sample s) {
        if (s.rule().kind() == Rule.Kind.KEYWORD) {
            return s.rule().forms().getFirst().literals().getFirst();
        }
        return s.rule().provider();
    }

    private static boolean redacted(RegexProvider provider, String message, String secret) {
        JsonObject body = Json.createObjectBuilder().add("model", "m").add("messages", Json.createArrayBuilder()
                .add(Json.createObjectBuilder().add("role", "user").add("content", message))).build();
        HttpRequestResult r = DecodedBodyTest.evaluate(provider, JsonObject.EMPTY_JSON_OBJECT,
                body.toString().getBytes(StandardCharsets.UTF_8), "content-type", "application/json");
        String out = r.body().map(b -> b.utf8().orElseThrow()).orElse(body.toString());
        return !Json.createReader(new java.io.StringReader(out)).readObject().getJsonArray("messages")
                .getJsonObject(0).getString("content").contains(secret);
    }
}
