package dev.openshell.builtin.regex;

/**
 * A body (or a multipart part) the scanner cannot turn into the text its reader would see: the stage fails with
 * {@link #code()}, so its {@code on_error} decides (never a silent pass). The message names the rule, never content.
 */
final class Undecodable extends Exception {
    private static final long serialVersionUID = 1L;

    /** Failure code for text that is not well-formed UTF-8 when UTF-8 is what it is read as. */
    static final String NOT_UTF8 = "body_not_utf8";
    /** Failure code for every other undecodable body: unknown charset or coding, malformed JSON, multipart, ... */
    static final String UNDECODABLE = "body_undecodable";

    private final String code;

    Undecodable(String code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    static Undecodable because(String message) {
        return new Undecodable(UNDECODABLE, message);
    }

    /** {@return the stage failure code} */
    String code() {
        return code;
    }
}
