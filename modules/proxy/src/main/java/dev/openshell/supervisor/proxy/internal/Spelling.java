package dev.openshell.supervisor.proxy.internal;

/**
 * A secret as an escaping may spell it, each character literal or escaped, in any mix ({@link JsonSpelling},
 * {@link PercentSpelling}): {@link SecretScrubber} tries it at each position its first two bytes allow.
 */
interface Spelling {
    /** Receives a pair of first bytes a spelling can start with. */
    @FunctionalInterface
    interface Pairs {
        /**
         * @param b0 the first byte, 0..255
         * @param b1 the second byte, 0..255, or -1 for any (a one-byte spelling)
         */
        void pair(int b0, int b1);
    }

    /**
     * {@return the length of the spelling of the secret at {@code i}; 0 for none; -1 when {@code buf} ends before it
     * could be decided}
     *
     * @param buf the bytes
     * @param i where to look
     * @param n where the bytes end
     */
    int match(byte[] buf, int i, int n);

    /** What {@link #match(byte[], int, int, boolean)} answers when a streamed text cannot be decided within the bound. */
    int OVERLONG = -2;

    /**
     * {@return as {@link #match(byte[], int, int)}, or {@link #OVERLONG}} when {@code complete} is false (a streamed
     * text whose held-back window is bounded by {@link #longest()}) and the bytes hold a start of the secret followed
     * by a spelling longer than that bound: the scan cannot decide it, and the stream must not go on. With
     * {@code complete} ({@code buf} holds the rest of the text), a spelling of any length is matched. The default:
     * spellings that never exceed their bound.
     *
     * @param buf the bytes
     * @param i where to look
     * @param n where the bytes end
     * @param complete whether the text ends at {@code n}
     */
    default int match(byte[] buf, int i, int n, boolean complete) {
        return match(buf, i, n);
    }

    /** {@return the length of the longest spelling: every character escaped} */
    int longest();

    /** Reports every pair of first bytes a spelling can start with. @param pairs the receiver */
    void starts(Pairs pairs);
}
