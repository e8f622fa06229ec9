package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import java.util.Objects;
import org.apiguardian.api.API;

/**
 * One logical response-body unit for one stage (wire {@code HttpResponseBodyUnit}). Unit boundaries carry no HTTP or
 * application meaning; in {@link HttpResponseBodyMode#STREAM_BYTES} they follow the upstream's flushes.
 *
 * @param sequence stage-local, contiguous from 1
 * @param data the decoded bytes: the whole body in {@link HttpResponseBodyMode#WHOLE_BODY_BYTES} (empty for an empty
 *     body), at most the smaller of 64 KiB and half the stage's limit in {@link HttpResponseBodyMode#STREAM_BYTES}
 * @param endOfStream whether this is the stage's last unit; when the end of a chunked or close-delimited body is
 *     discovered after the last data, an empty flagged unit follows. A stage must not rely on receiving it: an
 *     interrupted response ends the session instead ({@link HttpResponseStage#end})
 */
@API(status = EXPERIMENTAL, since = "0.2")
public record HttpResponseBodyUnit(long sequence, Body data, boolean endOfStream) {
    /**
     * Checks the parts.
     *
     * @throws IllegalArgumentException if {@code sequence} is below 1
     * @throws NullPointerException if {@code data} is {@code null}
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public HttpResponseBodyUnit {
        Objects.requireNonNull(data, "data");
        if (sequence < 1) {
            throw new IllegalArgumentException("sequence starts at 1");
        }
    }

    /** {@return the sequence and size only} */
    @Override
    public String toString() {
        return "HttpResponseBodyUnit[" + sequence + ", " + data.size() + " bytes" + (endOfStream ? ", end" : "")
                + "]";
    }
}
