package dev.openshell.builtin.regex;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.internal.EncodedWords;
import dev.openshell.middleware.spi.internal.HeaderParameters;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The response-header scan of {@code openshell/regex-response} at preflight: every header value the stage sees (the
 * supervisor hides credential, routing and hop-by-hop fields, {@code set-cookie} among them) is scanned as text, as
 * it is (no percent or other decoding), and with its parameters read as clients decode them ({@link #readable}).
 * <ul>
 *   <li>{@code mode: deny}: a match blocks the delivery ({@link RegexProvider#DENY_CODE}).</li>
 *   <li>{@code mode: redact}: each field with a match is removed and its lines written again with each match replaced
 *       by {@code [REDACTED:<id>]} (at the end of the head, in their order; a line whose parameter readings still
 *       hold a match after that is removed only); an integrity field ({@code etag},
 *       {@code digest}, ...) may only be removed, so it is removed. A match in a field stages may neither write nor
 *       remove (framing, coding, range), or more rewrites than a decision may carry
 *       ({@link EnvelopeLimits#headerMutationsFit}: count and bytes), blocks the delivery.</li>
 * </ul>
 * Findings as for bodies: one per secret type, counted over all fields. A field with a parameter or RFC 2047 word
 * declared in a charset that cannot be decoded ({@link #unreadable}) cannot be scanned as its client reads it: the
 * stage fails with {@code body_undecodable}, so its {@code on_error} decides.
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
     * @throws MiddlewareException ({@code body_undecodable}) if a field is {@link #unreadable}
     */
    static Outcome scan(List<HttpHeader> headers, RegexConfig config) {
        StringBuilder all = new StringBuilder();
        for (HttpHeader h : headers) {
            Read r = read(h.value());
            if (r.unreadable()) {
                throw new MiddlewareException(RegexProvider.UNDECODABLE_CODE, "a response header field has a parameter"
                        + " or encoded word in a charset that cannot be decoded");
            }
            all.append(r.text()).append('\n');
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
            if (!SecretScanner.scan(utf8(readable(h.value())), config.selection(), false).isEmpty()) {
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
                String r = h.name().equals(name) ? redacted(h.value(), config) : null;
                if (r != null && SecretScanner.scan(utf8(readable(r)), config.selection(), false).isEmpty()) {
                    mutations.add(HeaderMutation.write(name, r, ExistingHeaderAction.APPEND));
                } // a value still found in a decoded parameter reading: that line is removed only
            }
        }
        // nothing to rewrite (a match only across fields), or more rewrites than a decision may carry (the host would
        // refuse them as a stage failure): block rather than deliver it
        boolean block = names.isEmpty() || !EnvelopeLimits.headerMutationsFit(mutations);
        return new Outcome(findings, block, block ? List.of() : mutations);
    }

    /**
     * A header value read once.
     *
     * @param text the value, then every reading of its parameters, one a line ({@link #readable})
     * @param unreadable whether a parameter or RFC 2047 word of it is declared in a charset that cannot be decoded, or
     *     whose bytes that charset rejects ({@link HeaderParameters.Readings#unreadable}, {@link
     *     EncodedWords.Decoded#unreadable}: UTF-7, {@code unicode_escape}, an unknown name; Python's {@code email}
     *     and {@code urllib} decode some of them)
     */
    record Read(String text, boolean unreadable) {
    }

    /** {@return {@code value} read once: the text of {@link #readable} and whether it is unreadable} */
    static Read read(String value) {
        if (value.indexOf('*') < 0 && value.indexOf('\\') < 0 && !value.contains("=?")) {
            return new Read(value, false);
        }
        StringBuilder b = new StringBuilder(value);
        String latin1 = new String(value.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
        HeaderParameters.Readings all = HeaderParameters.readings(latin1, true);
        for (List<String> readings : all.byName().values()) {
            for (String r : readings) {
                b.append('\n').append(r);
            }
        }
        boolean unreadable = all.anyUnreadable() || latin1.contains("=?") && EncodedWords.decode(latin1).unreadable();
        return new Read(b.toString(), unreadable);
    }

    /**
     * {@return the value, then every reading of its parameters ({@link HeaderParameters#readings}: RFC 2231 / RFC
     * 8187 values in any charset, continuations joined, RFC 2047 words, quoted-pairs), one a line}
     */
    static String readable(String value) {
        return read(value).text();
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
