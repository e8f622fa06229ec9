package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HttpHeader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The response-header scan of {@code openshell/regex-response} at preflight: every header value the stage sees (the
 * supervisor hides credential, routing and hop-by-hop fields, {@code set-cookie} among them) is scanned as text, as
 * it is (no percent or other decoding).
 * <ul>
 *   <li>{@code mode: deny}: a match blocks the delivery ({@link RegexProvider#DENY_CODE}).</li>
 *   <li>{@code mode: redact}: each field with a match is removed and its lines written again with each match replaced
 *       by {@code [REDACTED:<id>]} (at the end of the head, in their order); an integrity field ({@code etag},
 *       {@code digest}, ...) may only be removed, so it is removed. A match in a field stages may neither write nor
 *       remove (framing, coding, range), or more rewrites than a decision may carry
 *       ({@link EnvelopeLimits#headerMutationsFit}: count and bytes), blocks the delivery.</li>
 * </ul>
 * Findings as for bodies: one per secret type, counted over all fields.
 */
final class HeaderScan {

    /**
     * What the scan found.
     *
     * @param findings one per secret type; empty when nothing matched
     * @param block whether the delivery must be blocked
     * @param mutations the head mutations that redact the matches (redact mode, not blocked)
     */
    record Outcome(List<Finding> findings, boolean block, List<HeaderMutation> mutations) {
        static final Outcome CLEAN = new Outcome(List.of(), false, List.of());
    }

    private HeaderScan() {
    }

    /**
     * {@return what the headers hold}
     *
     * @param headers the head as the stage sees it
     * @param config the stage's config
     */
    static Outcome scan(List<HttpHeader> headers, RegexConfig config) {
        StringBuilder all = new StringBuilder();
        for (HttpHeader h : headers) {
            all.append(h.value()).append('\n');
        }
        Scan found = SecretScanner.scan(utf8(all.toString()), config.selection(), false);
        if (found.isEmpty()) {
            return Outcome.CLEAN;
        }
        List<Finding> findings = RegexProvider.findings(found);
        if (config.mode() == RegexConfig.Mode.DENY) {
            return new Outcome(findings, true, List.of());
        }
        Set<String> names = new LinkedHashSet<>();
        for (HttpHeader h : headers) {
            if (!SecretScanner.scan(utf8(h.value()), config.selection(), false).isEmpty()) {
                names.add(h.name());
            }
        }
        List<HeaderMutation> mutations = new ArrayList<>();
        for (String name : names) {
            if (HeaderTable.responseReadOnly(name)) {
                return new Outcome(findings, true, List.of());
            }
            mutations.add(HeaderMutation.remove(name));
            if (HeaderTable.responseIntegrity(name)) {
                continue;
            }
            for (HttpHeader h : headers) {
                if (h.name().equals(name)) {
                    mutations.add(HeaderMutation.write(name, redacted(h.value(), config), ExistingHeaderAction.APPEND));
                }
            }
        }
        // nothing to rewrite (a match only across fields), or more rewrites than a decision may carry (the host would
        // refuse them as a stage failure): block rather than deliver it
        boolean block = names.isEmpty() || !EnvelopeLimits.headerMutationsFit(mutations);
        return new Outcome(findings, block, block ? List.of() : mutations);
    }

    private static String redacted(String value, RegexConfig config) {
        ByteBuffer text = utf8(value);
        byte[] out = SecretScanner.scan(text, config.selection(), true).redacted(text);
        return out == null ? value : new String(out, StandardCharsets.UTF_8);
    }

    private static ByteBuffer utf8(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.UTF_8)).asReadOnlyBuffer();
    }
}
