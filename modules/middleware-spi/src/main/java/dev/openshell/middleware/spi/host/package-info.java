/**
 * Restricted host capabilities: supervisor-only services that only the engine and named built-ins may use
 * (RFC 0009, "Decisions": "SigV4/request signing" must "run in-process with supervisor host capabilities").
 *
 * <p>This package is exported by qualified export to {@code dev.openshell.supervisor.engine},
 * {@code dev.openshell.supervisor.runtime} and {@code dev.openshell.builtin.sigv4} only. A qualified export binds to the module of that name in the boot layer,
 * so a module in a plugin layer gets {@link IllegalAccessError} even if it takes a built-in's name.
 */
package dev.openshell.middleware.spi.host;
