/**
 * The chain engine (RFC 0009, "Middleware ordering" and "The middleware contract"): assembly, the fold over one
 * request representation, failure policy, header rules and envelope limits.
 */
package dev.openshell.supervisor.engine.chain;
