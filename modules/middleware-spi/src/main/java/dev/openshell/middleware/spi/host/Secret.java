package dev.openshell.middleware.spi.host;

import static org.apiguardian.api.API.Status.INTERNAL;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apiguardian.api.API;

/**
 * A resolved credential value. Its {@link #toString()} never shows the value, so an accidental log line leaks
 * nothing; {@link #close()} zeroes the copy it holds.
 */
@API(status = INTERNAL, since = "0.1")
public final class Secret implements AutoCloseable {
    private final byte[] value;

    private Secret(byte[] value) {
        this.value = value;
    }

    /**
     * {@return a secret holding a copy of {@code value}, UTF-8 encoded}
     *
     * @param value the credential; never {@code null}
     */
    public static Secret of(String value) {
        return new Secret(value.getBytes(StandardCharsets.UTF_8));
    }

    /** {@return the value as UTF-8 text: use it, never log it} */
    public String reveal() {
        return new String(value, StandardCharsets.UTF_8);
    }

    /** {@return a copy of the value's bytes} */
    public byte[] revealBytes() {
        return value.clone();
    }

    /** Zeroes the held bytes. */
    @Override
    public void close() {
        Arrays.fill(value, (byte) 0);
    }

    @Override
    public String toString() {
        return "Secret[redacted]";
    }
}
