package dev.openshell.middleware.spi.internal;

/**
 * A charset name read from a body, kept as Python's codec lookup reads it ({@code encodings.normalize_encoding}, which
 * BeautifulSoup's and {@code charset_normalizer}'s lookups go through): ASCII letters (lower-cased), digits and
 * {@code .} are kept, every run of other bytes between two kept ones becomes one {@code -}, and such runs before the
 * first and after the last kept byte are dropped. So {@code "\tUTF-7"}, {@code "?utf-7"}, {@code "utf_7 "} and
 * {@code "utf--7"} are all {@code utf-7}, the name the reader resolves. At most {@value #MAX} bytes are kept (a
 * longer name is judged by its first ones, and no charset name is that long); runs of other bytes never count
 * toward it, so padding cannot push the name out. Mutable, reused per name.
 */
final class CharsetName {
    /** The most bytes kept. */
    static final int MAX = 64;

    private final byte[] kept = new byte[MAX];
    private int length;
    private boolean gap;

    /** Starts a new name. */
    void clear() {
        length = 0;
        gap = false;
    }

    /** {@return whether {@code c} is an ASCII letter or digit} The one test of it for a charset name's bytes. */
    static boolean alnum(int c) {
        return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9';
    }

    /** Reads the next byte of the name. */
    void add(byte c) {
        boolean keep = alnum(c) || c == '.';
        if (!keep) {
            gap = length > 0;
            return;
        }
        if (gap && length < MAX) {
            kept[length++] = '-';
        }
        gap = false;
        if (length < MAX) {
            kept[length++] = (byte) (c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
    }

    /** {@return whether no byte was kept} */
    boolean isEmpty() {
        return length == 0;
    }

    @Override
    public String toString() {
        return new String(kept, 0, length, java.nio.charset.StandardCharsets.ISO_8859_1);
    }
}
