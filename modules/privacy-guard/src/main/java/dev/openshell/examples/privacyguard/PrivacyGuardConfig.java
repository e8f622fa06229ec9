package dev.openshell.examples.privacyguard;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import java.util.Locale;
import java.util.Map;

/**
 * One policy's Privacy Guard configuration (the {@code config} mapping of a {@code network_middlewares} entry that
 * selects {@code examples/privacy-guard}).
 *
 * <pre>
 * config:
 *   images: redact   # redact (default) | deny | allow
 *   pii: redact      # redact (default) | allow
 * </pre>
 *
 * Unknown keys and values are refused, so a typo never silently weakens the guard.
 *
 * @param images what to do with images
 * @param pii what to do with e-mail addresses and phone numbers in message text
 */
record PrivacyGuardConfig(ImageMode images, PiiMode pii) {
    /** The configuration an empty mapping means: redact images and personal data. */
    static final PrivacyGuardConfig DEFAULT = new PrivacyGuardConfig(ImageMode.REDACT, PiiMode.REDACT);

    /** Image handling. */
    enum ImageMode {
        /** Replace each image with the text placeholder {@value ChatInspector#IMAGE_PLACEHOLDER}. */
        REDACT,
        /** Deny the whole request. */
        DENY,
        /** Keep images; still count them in findings. */
        ALLOW
    }

    /** Personal data handling. */
    enum PiiMode {
        /** Replace each e-mail address and phone number with a placeholder. */
        REDACT,
        /** Keep them; still count them in findings. */
        ALLOW
    }

    /**
     * Parses a config.
     *
     * @param config the policy's mapping
     * @return the configuration
     * @throws IllegalArgumentException with a message naming the key and the allowed values (never echoing a value)
     */
    static PrivacyGuardConfig parse(Struct config) {
        ImageMode images = ImageMode.REDACT;
        PiiMode pii = PiiMode.REDACT;
        for (Map.Entry<String, Value> e : config.getFieldsMap().entrySet()) {
            switch (e.getKey()) {
                case "images" -> images = ImageMode.valueOf(word(e.getValue(), "images", "redact, deny, allow"));
                case "pii" -> pii = PiiMode.valueOf(word(e.getValue(), "pii", "redact, allow"));
                default -> throw new IllegalArgumentException("unknown config key " + safeKey(e.getKey())
                        + "; known keys: images, pii");
            }
        }
        return new PrivacyGuardConfig(images, pii);
    }

    private static String word(Value v, String key, String allowed) {
        if (v.getKindCase() == Value.KindCase.STRING_VALUE
                && java.util.List.of(allowed.split(", ")).contains(v.getStringValue())) {
            return v.getStringValue().toUpperCase(Locale.ROOT);
        }
        throw new IllegalArgumentException("config key '" + key + "' must be one of: " + allowed);
    }

    private static String safeKey(String key) {
        return key.length() <= 40 && key.matches("[A-Za-z0-9_.-]+") ? "'" + key + "'" : "(" + key.length()
                + " characters)";
    }
}
