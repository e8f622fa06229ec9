package dev.openshell.middleware.spi.internal;

import java.util.List;

/**
 * The {@code charset} and {@code encoding} assignments in one stream of characters of a tag and its line, for
 * {@link MetaCharsets}: every {@code charset} or {@code encoding} in any case followed by optional white space,
 * {@code =}, optional white space and optional quotes starts a value, read as {@link CharsetValue} reads it. A tag is
 * read by two: one over its characters with character references read as what they stand for (an HTML parser), one
 * over its bytes as written (BeautifulSoup's and node-fetch's expressions on the raw bytes: {@code utf&#7;} is
 * {@code utf_7} to Python's codec lookup). Mutable, reused.
 */
final class Assignments {
    /** Where a value stands: after a keyword, after {@code =}, in the value. */
    private enum Value { NONE, EQUALS, START, VALUE }

    /** How many letters of {@code charset} and of {@code encoding} end at the last character. */
    private int charset;
    private int encoding;
    private Value value = Value.NONE;
    /** In {@link Value#START}: the last quote before the value, or 0. */
    private byte opening;
    private final CharsetValue reading = new CharsetValue();
    /** A UTF-8 lead byte of a letter that folds to an ASCII one ({@link #folded}), or 0. */
    private byte lead;
    /** Where a value that starts now is declared. */
    private BodyCharsets.Source at = BodyCharsets.Source.META;
    /** Where the value being read is declared. */
    private BodyCharsets.Source valueAt = BodyCharsets.Source.META;

    /** Starts a tag: no keyword, no value; its values are declared {@code at}. */
    void reset(BodyCharsets.Source at) {
        charset = 0;
        encoding = 0;
        value = Value.NONE;
        lead = 0;
        this.at = at;
    }

    /** From now on, a value that starts is declared {@code at} (an XML declaration's reach ended). */
    void at(BodyCharsets.Source at) {
        this.at = at;
    }

    /** One character: the value, the next keyword; a name that ends goes to {@code out} (see {@link #end}). */
    void text(byte c, List<BodyCharsets.Declaration> out, Recent recent) {
        value(c, out, recent);
        int l = folded(c);
        if (l < 0) {
            return; // the first byte of a letter that folds to ASCII: the keywords wait for the second
        }
        charset = l == "charset".charAt(charset) ? charset + 1 : l == 'c' ? 1 : 0;
        encoding = l == "encoding".charAt(encoding) ? encoding + 1 : l == 'e' ? 1 : 0;
        if (charset == 7 || encoding == 8) {
            end(out, recent); // a value that holds a keyword ends there; the new assignment is read too
            value = Value.EQUALS;
            charset = 0;
            encoding = 0;
        }
    }

    /**
     * {@return {@code c} lower-cased, with the letters Python's {@code re.IGNORECASE} folds to ASCII read as that
     * letter (U+017F {@code ſ} is {@code s}, U+0130 {@code İ} and U+0131 {@code ı} are {@code i}, in UTF-8; requests'
     * {@code get_encodings_from_content} matches {@code charset} so on decoded text: attacker pass 13, P15-8); -1 for
     * the lead byte of one}
     */
    private int folded(byte c) {
        byte first = lead;
        lead = 0;
        if (first == (byte) 0xc5 && c == (byte) 0xbf) {
            return 's';
        }
        if (first == (byte) 0xc4 && (c == (byte) 0xb0 || c == (byte) 0xb1)) {
            return 'i';
        }
        if (c == (byte) 0xc5 || c == (byte) 0xc4) {
            lead = c;
            return -1;
        }
        return c >= 'A' && c <= 'Z' ? c + 32 : c & 0xff;
    }

    /** Advances the value being read after a keyword by one character. */
    private void value(byte c, List<BodyCharsets.Declaration> out, Recent recent) {
        switch (value) {
            case NONE -> { }
            case EQUALS -> {
                value = MetaCharsets.space(c) ? Value.EQUALS : c == '=' ? Value.START : Value.NONE;
                opening = 0;
            }
            case START -> {
                if (MetaCharsets.space(c) || c == '"' || c == '\'') {
                    opening = MetaCharsets.space(c) ? opening : c; // ""utf-7": readability's ["']* takes every quote
                    return;
                }
                reading.start(opening);
                valueAt = at;
                value = Value.VALUE;
                if (!reading.add(c)) {
                    end(out, recent);
                }
            }
            case VALUE -> {
                if (!reading.add(c)) {
                    end(out, recent);
                }
            }
        }
    }

    /**
     * Ends a value being read: each of its readings some reader resolves goes to {@code out}, unless {@code recent}
     * holds it (the other reading of the same tag gave it).
     */
    void end(List<BodyCharsets.Declaration> out, Recent recent) {
        if (value == Value.VALUE) {
            for (String name : reading.names()) {
                if (KnownCharsets.resolves(name) && recent.add(name)) {
                    out.add(new BodyCharsets.Declaration(name, valueAt));
                }
            }
        }
        value = Value.NONE;
    }

    /**
     * The last {@value #SIZE} names a tag gave, so that its two readings give a name once (a tag that gives one name
     * more than {@value #SIZE} other names apart gives it again: a repeat only refuses what was refused). Mutable.
     */
    static final class Recent {
        static final int SIZE = 8;
        private final String[] names = new String[SIZE];
        private int next;

        /** Starts a tag. */
        void clear() {
            java.util.Arrays.fill(names, null);
        }

        /** {@return whether {@code name} was not among the last ones} (it is now) */
        boolean add(String name) {
            for (String n : names) {
                if (name.equals(n)) {
                    return false;
                }
            }
            names[next] = name;
            next = (next + 1) % SIZE;
            return true;
        }
    }
}
