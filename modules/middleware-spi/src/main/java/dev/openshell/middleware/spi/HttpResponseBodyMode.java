package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import org.apiguardian.api.API;

/**
 * Which body units one response stage receives (wire {@code HttpResponseBodyMode}; NVIDIA/OpenShell
 * {@code proto/supervisor_middleware.proto}). Wire values: {@code HEADERS_ONLY} = 1, {@code WHOLE_BODY_BYTES} = 2,
 * {@code STREAM_BYTES} = 3.
 *
 * <p><b>An open enum:</b> later minor versions add constants (docs/plugin-authors.md, "Evolution rules"); never
 * {@code switch} over it exhaustively without a {@code default} branch.
 */
@API(status = EXPERIMENTAL, since = "0.2")
public enum HttpResponseBodyMode {
    /** The stage inspects and mutates the head only; it receives no body unit. Always permitted. */
    HEADERS_ONLY,
    /**
     * The stage receives the complete decoded body as exactly one unit with {@code endOfStream} set. The body and its
     * replacement must fit {@link HttpResponsePreflight#maxPayloadBytes()}; the supervisor buffers it before the head
     * goes to the client, failing the stage with {@code whole_body_over_capacity} or
     * {@code whole_body_accumulation_timeout}.
     */
    WHOLE_BODY_BYTES,
    /**
     * The stage receives bounded units in lockstep as the upstream flushes them (each at most the smaller of 64 KiB
     * and half of {@link HttpResponsePreflight#maxPayloadBytes()}); the last sets {@code endOfStream}. The response
     * keeps streaming; its total size is unbounded.
     */
    STREAM_BYTES
}
