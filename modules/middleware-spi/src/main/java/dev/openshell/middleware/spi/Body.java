package dev.openshell.middleware.spi;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;

/**
 * An immutable, bounded request body: at most {@link EnvelopeLimits#MAX_BODY_BYTES} (4 MiB) bytes
 * (RFC 0009, "The middleware contract": "bounded body").
 *
 * <p>The bytes are copied in and never handed out unprotected: {@link #toByteArray()} copies,
 * {@link #asReadOnlyBuffer()} and {@link #newInputStream()} share without copying.
 */
public final class Body {
    private static final Body EMPTY = new Body(new byte[0]);
    private final byte[] bytes;

    private Body(byte[] bytes) {
        this.bytes = bytes;
    }

    /** {@return the empty body} */
    public static Body empty() {
        return EMPTY;
    }

    /**
     * {@return a body holding a copy of {@code bytes}}
     *
     * @param bytes the content; never {@code null}
     * @throws IllegalArgumentException if longer than {@link EnvelopeLimits#MAX_BODY_BYTES}
     */
    public static Body of(byte[] bytes) {
        return ofOwned(bytes.clone());
    }

    /**
     * {@return a body holding {@code text} encoded as UTF-8}
     *
     * @param text the content; never {@code null}
     * @throws IllegalArgumentException if the encoding is longer than {@link EnvelopeLimits#MAX_BODY_BYTES}
     */
    public static Body ofUtf8(String text) {
        return ofOwned(text.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Wraps an array without copying; the caller gives up the array and must never change it again.
     * Only for the host and for providers that have just built {@code bytes} themselves.
     *
     * @param bytes the content, owned by the new body from now on
     * @return the body
     * @throws IllegalArgumentException if longer than {@link EnvelopeLimits#MAX_BODY_BYTES}
     */
    public static Body ofOwned(byte[] bytes) {
        if (bytes.length > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new IllegalArgumentException("body of %d bytes exceeds the %d-byte platform maximum"
                    .formatted(bytes.length, EnvelopeLimits.MAX_BODY_BYTES));
        }
        return bytes.length == 0 ? EMPTY : new Body(bytes);
    }

    /** {@return the size in bytes} */
    public int size() {
        return bytes.length;
    }

    /** {@return whether the body has no bytes} */
    public boolean isEmpty() {
        return bytes.length == 0;
    }

    /** {@return a copy of the bytes} */
    public byte[] toByteArray() {
        return bytes.clone();
    }

    /** {@return a read-only view of the bytes, positioned at 0} */
    public ByteBuffer asReadOnlyBuffer() {
        return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
    }

    /** {@return a stream over the bytes} */
    public InputStream newInputStream() {
        return new ByteArrayInputStream(bytes);
    }

    /**
     * Decodes strictly as UTF-8.
     *
     * @return the text, or empty when the bytes are not well-formed UTF-8 (never replaced silently)
     */
    public Optional<String> utf8() {
        try {
            CharBuffer chars = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes));
            return Optional.of(chars.toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Body other && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    /** {@return a summary with the size only: body content never appears in logs} */
    @Override
    public String toString() {
        return "Body[" + bytes.length + " bytes]";
    }
}
