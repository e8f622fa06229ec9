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

    /** {@return the length of the longest spelling: every character escaped} */
    int longest();

    /** Reports every pair of first bytes a spelling can start with. @param pairs the receiver */
    void starts(Pairs pairs);
}
