package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;

import org.apiguardian.api.API;

/**
 * Why the supervisor ends an opened stage-local session (a WebSocket session's message stream, a response's body
 * stream): the wire's {@code MiddlewareSessionEndReason}, whose numbers are the constants' in this order from 1. A
 * stage hears at most one end per session, best effort; it answers none.
 *
 * <p><b>An open enum:</b> later minor versions add constants (docs/plugin-authors.md, "Evolution rules"); never
 * {@code switch} over it exhaustively without a {@code default} branch.
 */
@API(status = EXPERIMENTAL, since = "0.2")
public enum SessionEndReason {
    /** The evaluated interaction completed normally (wire 1). */
    NORMAL,
    /** The sandbox-side peer disconnected before processing completed (wire 2). */
    DOWNSTREAM_DISCONNECT,
    /** A policy reload replaced the active middleware chain (wire 3). */
    POLICY_RELOAD,
    /** A middleware stage denied the operation or blocked the response's delivery (wire 4). */
    MIDDLEWARE_DENIAL,
    /** This or another selected middleware stage failed (wire 5). */
    MIDDLEWARE_FAILURE,
    /** A proxied or middleware protocol contract was violated (wire 6). */
    PROTOCOL_ERROR,
    /** The supervisor cancelled evaluation for another lifecycle reason (wire 7). */
    CANCELLATION,
    /** The upstream rejected the operation or failed before a valid response head or accepted upgrade (wire 8). */
    UPSTREAM_FAILURE,
    /** Network policy denied the operation (wire 9). */
    POLICY_DENIAL,
    /** The stage declined inspection at preflight: a successful stage-local outcome (wire 10). */
    STAGE_SKIPPED,
    /** The upstream disconnected after a valid response head or accepted upgrade, before the end (wire 11). */
    UPSTREAM_DISCONNECT
}
