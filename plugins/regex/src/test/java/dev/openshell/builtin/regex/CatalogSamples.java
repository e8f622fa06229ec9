package dev.openshell.builtin.regex;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32;

/**
 * The per-entry samples of {@code catalog-samples.tsv} (test resources): for every catalog entry, tokens of its
 * provider's documented format that must be found ({@code tp}) and near misses that must not be ({@code near}).
 * Templates are expanded with a fixed seed per line, so every run sees the same text.
 */
final class CatalogSamples {
    private static final Pattern TEMPLATE = Pattern.compile("\\{(\\d+):(\\w+)\\}|\\{crc\\}");
    private static final Map<String, String> CLASSES = Map.of(
            "an", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            "anx", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
            "alpha", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
            "low", "abcdefghijklmnopqrstuvwxyz0123456789",
            "up", "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
            "num", "0123456789",
            "hex", "0123456789abcdef",
            "b32", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
            "b64", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
            "same", "a");
    static final List<Sample> ALL = load();

    /**
     * One sample.
     *
     * @param id the catalog entry
     * @param positive whether the entry must find it
     * @param key the key name a keyword entry's value is assigned to, or {@code null}
     * @param token the expanded sample (the value, for a keyword entry); markers removed
     * @param secretStart where the secret starts in {@code token}
     * @param secretEnd where it ends
     * @param line the line in the resource
     */
    record Sample(String id, boolean positive, String key, String token, int secretStart, int secretEnd, int line) {
        /** {@return the sample as text: the token, or {@code KEY="value"} for a keyword entry} */
        String text() {
            return key == null ? token : key + "=\"" + token + "\"";
        }

        /** {@return the secret alone} */
        String secret() {
            return token.substring(secretStart, secretEnd);
        }

        /** {@return where the secret starts in {@link #text()}} */
        int textStart() {
            return key == null ? secretStart : key.length() + 2 + secretStart;
        }

        /** {@return {@link #text()} with the secret replaced by the entry's placeholder} */
        String redacted() {
            String t = text();
            int s = textStart();
            return t.substring(0, s) + Samples.placeholder(id) + t.substring(s + secretEnd - secretStart);
        }

        /** {@return the catalog entry} */
        Rule rule() {
            return Catalog.get().byId(id);
        }

        @Override
        public String toString() {
            return id + (positive ? " tp " : " near ") + "(line " + line + ")";
        }
    }

    private CatalogSamples() {
    }

    /** {@return the samples that must be found} */
    static List<Sample> positives() {
        return ALL.stream().filter(Sample::positive).toList();
    }

    /** {@return the near misses} */
    static List<Sample> nearMisses() {
        return ALL.stream().filter(s -> !s.positive()).toList();
    }

    private static List<Sample> load() {
        List<Sample> out = new ArrayList<>();
        try (InputStream in = CatalogSamples.class.getResourceAsStream("/catalog-samples.tsv");
             BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            int n = 0;
            while ((line = r.readLine()) != null) {
                n++;
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                if (f.length != 4 || !(f[1].equals("tp") || f[1].equals("near"))) {
                    throw new IllegalStateException("catalog-samples.tsv line " + n + ": 4 columns, tp or near");
                }
                String text = expand(f[3].replace("\\n", "\n"), new Random(f[0].hashCode() * 31L + n));
                int s = text.indexOf('\u00ab');
                int e = text.indexOf('\u00bb');
                if (s >= 0) {
                    text = text.substring(0, s) + text.substring(s + 1, e) + text.substring(e + 1);
                    e--;
                } else {
                    s = 0;
                    e = text.length();
                }
                out.add(new Sample(f[0], f[1].equals("tp"), f[2].equals("-") ? null : f[2], text, s, e, n));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return List.copyOf(out);
    }

    static String expand(String template, Random random) {
        Matcher m = TEMPLATE.matcher(template);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(b, "");
            if (m.group(1) == null) {
                String payload = b.substring(b.length() - 30);
                CRC32 crc = new CRC32();
                crc.update(payload.getBytes(StandardCharsets.US_ASCII));
                b.append(TokenChecks.base62(crc.getValue(), 6));
                continue;
            }
            String cls = CLASSES.get(m.group(2));
            if (cls == null) {
                throw new IllegalStateException("unknown class " + m.group(2));
            }
            for (int i = 0; i < Integer.parseInt(m.group(1)); i++) {
                b.append(cls.charAt(random.nextInt(cls.length())));
            }
        }
        m.appendTail(b);
        return b.toString();
    }
}
