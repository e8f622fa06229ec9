package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.HttpHeader;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The response step's verdict on a response head ({@link PolicySteps.ResponseChain}).
 */
public sealed interface ResponseVerdict {
    /**
     * Deliver the response with {@code headers} (framing fields are the proxy's own), its body through {@code body}
     * when a stage reads it.
     *
     * @param headers the end-to-end fields after every accepted mutation
     * @param body the inspecting stages, when a stage selected a body mode
     */
    record Deliver(List<HttpHeader> headers, Optional<ResponseBody> body) implements ResponseVerdict {
        /** @throws NullPointerException if a part is {@code null} */
        public Deliver {
            headers = List.copyOf(headers);
            Objects.requireNonNull(body, "body");
        }
    }

    /**
     * Do not deliver: answer {@code answer} instead, without a byte of the upstream's response, and do not reuse the
     * upstream connection (a block, or a {@code fail_closed} failure before the head was committed).
     *
     * @param answer the platform answer
     */
    record Withhold(Answer answer) implements ResponseVerdict {
        /** @throws NullPointerException if {@code answer} is {@code null} */
        public Withhold {
            Objects.requireNonNull(answer, "answer");
        }
    }
}
