package dev.openshell.builtin.regex;

import java.util.List;

/**
 * One entry of the catalog ({@link Catalog}): a secret format, how it is recognised and where its definition comes
 * from. The entry's {@link #id()} names it in config ({@code patterns}), in findings ({@code secret.<id>}) and in
 * placeholders ({@code [REDACTED:<id>]}).
 *
 * <p>Three ways of recognising:
 * <ul>
 *   <li>{@link Kind#PREFIX}: a literal prefix (case-sensitive) followed by the {@link Form#shape()}, as a whole token:
 *       the character before the prefix must not be an ASCII letter or digit, one of {@link Form#edge()}, or a
 *       {@code _} or {@code -} that the token's own classes hold; the character after the match must not be an ASCII
 *       letter or digit, one of the edge or a character of the token's classes;</li>
 *   <li>{@link Kind#KEYWORD}: a keyword (ASCII case-insensitive) inside a key name, then the rest of the key name, an
 *       assignment operator ({@code =}, {@code :}, {@code :=}, {@code =>}, {@code ,} ...) or a JSON member, XML element
 *       or YAML key, optional quotes, and a value of the shape, ending the token; only the value is reported and
 *       redacted, and its Shannon entropy must reach {@link #entropy()};</li>
 *   <li>{@link Kind#PEM}: a PEM private key block ({@code -----BEGIN ... PRIVATE KEY-----} through its END line).</li>
 * </ul>
 *
 * @param index the entry's position in the catalog: at one text position the lowest index that matches wins
 * @param id the stable identifier, {@code [a-z0-9_]+}
 * @param label the audit-safe display label
 * @param provider the provider's identifier, {@code [a-z0-9_]+}; {@code patterns} may name it to select all its entries
 * @param kind how it is recognised
 * @param forms one or more literal lists with their shape (prefix and keyword entries); empty for PEM
 * @param entropy the least Shannon entropy, in bits per character, of the matched token body or value; 0 for none
 * @param checksum how the token carries a checksum, or {@code null}: a valid one raises the finding's confidence
 *     to {@code high}, an invalid one never lets a well-formed token through
 * @param enabledByDefault whether the entry is looked for when the config names no {@code patterns}
 * @param bareKey for a keyword entry: whether the keyword alone names the credential, so the key name need not also
 *     hold a credential word ({@link Assignment#CREDENTIAL_WORDS})
 * @param source where the format is documented (the provider's own documentation)
 * @param notMatched what the entry deliberately does not match
 */
record Rule(int index, String id, String label, String provider, Kind kind, List<Form> forms, double entropy,
            Checksum checksum, boolean enabledByDefault, boolean bareKey, String source, String notMatched) {

    /** How an entry is recognised. */
    enum Kind {
        /** A literal prefix and a shape. */
        PREFIX,
        /** A keyword in a key name, an assignment and a value of a shape. */
        KEYWORD,
        /** A PEM private key block. */
        PEM
    }

    /** The checksum schemes an entry may name. */
    enum Checksum {
        /**
         * The last 6 characters are the CRC-32 of the characters between the prefix and them, in base 62
         * ({@code 0-9A-Za-z}), left-padded with {@code 0} (GitHub's and npm's token formats).
         */
        CRC32_BASE62
    }

    /**
     * One way an entry's token is written.
     *
     * @param literals the prefixes (case-sensitive) or keywords (lowercase; matched ignoring ASCII case), each at least
     *     3 characters
     * @param lead for a literal that stands inside the token (such as {@code .atlasv1.}): the fixed-length shape of the
     *     token's characters before it, or {@code null}; the token then starts where the lead starts
     * @param shape what follows a prefix, or the value after a keyword's assignment; {@code null} when the token ends
     *     with the literal (only with a lead)
     * @param edge characters besides ASCII letters and digits that continue a token
     */
    record Form(List<String> literals, Shape lead, Shape shape, String edge) {
        /** {@return whether {@code c} (a byte value) is in the lead's or the shape's classes} @param c a byte value */
        boolean inAlphabet(int c) {
            return (shape != null && shape.inAlphabet(c)) || (lead != null && lead.inAlphabet(c));
        }
    }

    /** {@return {@code secret.<id>}} */
    String findingType() {
        return "secret." + id;
    }

    /** {@return {@code [REDACTED:<id>]}} */
    String placeholder() {
        return "[REDACTED:" + id + "]";
    }
}
