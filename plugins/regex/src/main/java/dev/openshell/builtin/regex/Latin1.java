package dev.openshell.builtin.regex;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Text bytes seen as ISO-8859-1 characters, one {@code char} per byte, without a copy: what the regular-expression
 * engines ({@link java.util.regex}, RE2/J) read. Every ASCII byte is its ASCII character; every byte of a non-ASCII
 * character is a character above U+007F, which no ASCII class contains.
 */
final class Latin1 implements CharSequence {
    private final ByteBuffer bytes;
    private final int offset;
    private final int length;

    Latin1(ByteBuffer bytes) {
        this(bytes, 0, bytes.limit());
    }

    /** A window of the text: characters {@code [offset, offset + length)}. */
    Latin1(ByteBuffer bytes, int offset, int length) {
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public char charAt(int index) {
        if (index < 0 || index >= length) {
            throw new IndexOutOfBoundsException(index);
        }
        return (char) (bytes.get(offset + index) & 0xff);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
        if (start < 0 || end > length || start > end) {
            throw new IndexOutOfBoundsException(start);
        }
        return new Latin1(bytes, offset + start, end - start);
    }

    @Override
    public String toString() {
        byte[] b = new byte[length];
        bytes.get(offset, b);
        return new String(b, StandardCharsets.ISO_8859_1);
    }
}
