/**
 * Credential injection (RFC 0009, "Operation phases and placement": credential injection runs after the middleware
 * chain, so no middleware ever sees supervisor credentials). The sandbox sends placeholders
 * ({@code openshell:resolve:env:NAME}); after the chain the supervisor replaces them with real values, only for
 * hosts each credential is bound to.
 */
package dev.openshell.supervisor.engine.credentials;
