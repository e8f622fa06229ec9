package dev.openshell.supervisor.engine.chain;

/**
 * Grammars and sanitizers for text that leaves the engine (client responses, audit, logs). Package-private: the
 * rules are documented where they apply ({@link StageRecord}, {@link ChainMetadata}, {@link DenyResponse}).
 */
final class SafeText {
    /** Longest safe reason, in characters. */
    static final int MAX_SAFE_REASON = 160;

    private SafeText() {
    }

    /**
     * {@return {@code text} reduced to {@code [A-Za-z0-9_\-: ]}: every other character becomes a space, runs of
     * spaces collapse, the ends are trimmed, and at most {@value #MAX_SAFE_REASON} characters remain;
     * {@code unspecified} when nothing is left}
     */
    static String safeReason(String text) {
        StringBuilder b = new StringBuilder(Math.min(text.length(), MAX_SAFE_REASON));
        boolean space = true;
        for (int i = 0; i < text.length() && b.length() < MAX_SAFE_REASON; i++) {
            char c = text.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '-' || c == ':';
            if (ok) {
                b.append(c);
                space = false;
            } else if (!space) {
                b.append(' ');
                space = true;
            }
        }
        int len = b.length();
        while (len > 0 && b.charAt(len - 1) == ' ') {
            len--;
        }
        b.setLength(len);
        return b.isEmpty() ? "unspecified" : b.toString();
    }

    /**
     * {@return whether {@code s} is {@code [first][rest]*} with at most {@code max} characters}, where {@code first}
     * is {@code [a-z0-9]} and {@code rest} is {@code [a-z0-9] + extra}
     */
    static boolean isLowerToken(String s, int max, String extra) {
        if (s.isEmpty() || s.length() > max) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (i > 0 && extra.indexOf(c) >= 0);
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** {@return whether {@code s} holds no C0 control character and no DEL} */
    static boolean hasNoControls(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return false;
            }
        }
        return true;
    }
}
