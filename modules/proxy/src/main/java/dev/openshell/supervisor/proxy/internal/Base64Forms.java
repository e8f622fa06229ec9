package dev.openshell.supervisor.proxy.internal;

import java.util.Base64;
import java.util.List;

/**
 * The base64 forms of a secret the response scrub searches for (RFC 4648 sections 4 and 5: the standard and the
 * URL-safe alphabet). A value inside a longer encoded text (Basic {@code user:password}, a JSON document encoded
 * whole) starts at one of three byte alignments, so each alignment gives a form: only the characters that carry the
 * value's bits alone, since the characters at either end also carry the bits of the bytes around it. Where the value
 * ends an encoded text that is padded, the last character carries only the value's last bits and zero bits, so that
 * character and its {@code =} padding are a form too: nothing of the value is left beside the placeholder. A form
 * shorter than four characters is not searched (too common to mean the secret).
 */
final class Base64Forms {
    private Base64Forms() {
    }

    /**
     * Adds the forms of {@code raw} to {@code out}.
     *
     * @param raw the secret's UTF-8 bytes
     * @param out where the forms go (repeats are removed by the caller)
     */
    static void addTo(byte[] raw, List<String> out) {
        for (Base64.Encoder enc : List.of(Base64.getEncoder().withoutPadding(),
                Base64.getUrlEncoder().withoutPadding())) {
            for (int k = 0; k < 3; k++) {
                byte[] shifted = new byte[k + raw.length];
                System.arraycopy(raw, 0, shifted, k, raw.length);
                String e = enc.encodeToString(shifted);
                int start = k == 0 ? 0 : k + 1; // characters carrying only secret bits
                int end = (shifted.length * 8) / 6;
                if (end - start < 4) {
                    continue;
                }
                out.add(e.substring(start, end));
                if (shifted.length % 3 != 0) {
                    out.add(e.substring(start) + "==".substring(shifted.length % 3 - 1));
                }
            }
        }
    }
}
