package dev.openshell.supervisor.proxy.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Replaces injected secret values in a byte stream by their placeholders, for the response of a request into which
 * credentials were injected (issue 22, item 2: "nothing comes back"). Not yet wired into {@link ResponseRelay}.
 *
 * <p>Forms searched for each secret: the value as UTF-8; its base64 (standard and URL-safe alphabets, at each of the
 * three byte alignments, so the value is found inside a longer encoded text such as Basic {@code user:password});
 * its RFC 3986 percent-encoding (upper- and lowercase hex); its JSON string escaping. Longest form first at each
 * position; each match is replaced by the secret's placeholder.
 *
 * <p>Streaming: {@link #feed} emits everything that can no longer be the start of a match and keeps at most
 * {@link #window()} - 1 bytes (the longest form's length minus one) as carry-over, so a match split across chunks is
 * still found; {@link #finish} flushes the carry. One instance per response; not thread-safe.
 */
final class SecretScrubber {
    private final byte[][] forms;
    private final byte[][] replacements;
    private final int window;
    private byte[] carry = new byte[0];
    private long matches;

    /**
     * @param secrets each secret value mapped to its placeholder (e.g. {@code openshell:resolve:env:NAME})
     * @throws IllegalArgumentException if a secret is empty
     */
    SecretScrubber(Map<String, String> secrets) {
        Map<String, byte[]> byForm = new LinkedHashMap<>();
        secrets.forEach((secret, placeholder) -> {
            if (secret.isEmpty()) {
                throw new IllegalArgumentException("an empty secret cannot be scrubbed");
            }
            byte[] p = placeholder.getBytes(StandardCharsets.UTF_8);
            for (String form : forms(secret)) {
                byForm.putIfAbsent(form, p);
            }
        });
        List<Map.Entry<String, byte[]>> sorted = new ArrayList<>(byForm.entrySet());
        sorted.sort(Comparator.comparingInt((Map.Entry<String, byte[]> e) -> e.getKey().length()).reversed());
        forms = new byte[sorted.size()][];
        replacements = new byte[sorted.size()][];
        int w = 1;
        for (int i = 0; i < sorted.size(); i++) {
            forms[i] = sorted.get(i).getKey().getBytes(StandardCharsets.UTF_8);
            replacements[i] = sorted.get(i).getValue();
            w = Math.max(w, forms[i].length);
        }
        window = w;
    }

    /** {@return every form searched for {@code secret}, shortest ones that are too short to be telling dropped} */
    static List<String> forms(String secret) {
        List<String> out = new ArrayList<>();
        byte[] raw = secret.getBytes(StandardCharsets.UTF_8);
        out.add(secret);
        for (Base64.Encoder enc : List.of(Base64.getEncoder().withoutPadding(),
                Base64.getUrlEncoder().withoutPadding())) {
            for (int k = 0; k < 3; k++) {
                byte[] shifted = new byte[k + raw.length];
                System.arraycopy(raw, 0, shifted, k, raw.length);
                String e = enc.encodeToString(shifted);
                int start = k == 0 ? 0 : k + 1; // characters carrying only secret bits
                int end = (shifted.length * 8) / 6;
                if (end - start >= 4) {
                    out.add(e.substring(start, end));
                }
            }
        }
        out.add(percent(raw, true));
        out.add(percent(raw, false));
        out.add(json(secret, true));
        out.add(json(secret, false));
        return out.stream().distinct().toList();
    }

    /** {@return the length of the longest form: the carry-over window} */
    int window() {
        return window;
    }

    /** {@return how many matches were replaced so far} */
    long matches() {
        return matches;
    }

    /** {@return the scrubbed bytes that are final after {@code chunk}} @param chunk the next bytes of the stream */
    byte[] feed(byte[] chunk) {
        return scan(concat(carry, chunk), false);
    }

    /** {@return the scrubbed rest of the stream} */
    byte[] finish() {
        return scan(carry, true);
    }

    /** {@return {@code all} scrubbed in one go} @param all a complete text, e.g. a header value */
    byte[] scrubAll(byte[] all) {
        byte[] head = feed(all);
        byte[] tail = finish();
        return concat(head, tail);
    }

    private byte[] scan(byte[] buf, boolean last) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(buf.length + 16);
        int i = 0;
        int n = buf.length;
        outer:
        while (i < n) {
            if (!last && i > n - window) {
                break; // a match starting here could continue in the next chunk
            }
            for (int f = 0; f < forms.length; f++) {
                byte[] form = forms[f];
                if (form.length <= n - i && form[0] == buf[i] && regionEquals(buf, i, form)) {
                    out.write(replacements[f], 0, replacements[f].length);
                    matches++;
                    i += form.length;
                    continue outer;
                }
            }
            out.write(buf[i]);
            i++;
        }
        carry = Arrays.copyOfRange(buf, i, n);
        return out.toByteArray();
    }

    private static boolean regionEquals(byte[] buf, int at, byte[] form) {
        return Arrays.equals(buf, at, at + form.length, form, 0, form.length);
    }

    private static byte[] concat(byte[] a, byte[] b) {
        if (a.length == 0) {
            return b;
        }
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** RFC 3986 percent-encoding, unreserved characters kept. */
    static String percent(byte[] raw, boolean upper) {
        String hex = upper ? "0123456789ABCDEF" : "0123456789abcdef";
        StringBuilder b = new StringBuilder(raw.length * 3);
        for (byte x : raw) {
            int c = x & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'
                    || c == '_' || c == '~') {
                b.append((char) c);
            } else {
                b.append('%').append(hex.charAt(c >> 4)).append(hex.charAt(c & 0xf));
            }
        }
        return b.toString();
    }

    /** JSON string escaping (RFC 8259 section 7), non-ASCII as {@code \\uXXXX}, {@code /} as {@code \/} or kept. */
    static String json(String s, boolean slash) {
        Objects.requireNonNull(s, "s");
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '/' -> b.append(slash ? "\\/" : "/");
                default -> {
                    if (c < 0x20 || c > 0x7e) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }
}
