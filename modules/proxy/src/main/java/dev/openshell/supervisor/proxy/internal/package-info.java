/**
 * Implementation of the proxy: strict HTTP/1.1 parsing and framing (RFC 9112), host normalisation and SSRF checks,
 * the supervisor CA and TLS interception, upstream pooling, and the Helidon connection that ties them together. Not
 * exported.
 */
package dev.openshell.supervisor.proxy.internal;
