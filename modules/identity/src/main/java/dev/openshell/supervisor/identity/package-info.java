/**
 * Process identity on Linux. {@link dev.openshell.supervisor.identity.ProcessIdentifier} answers "which process, on
 * this host or in this network namespace, holds the client end of this TCP connection?" with an
 * {@link dev.openshell.supervisor.identity.Identification}: the {@link dev.openshell.supervisor.identity.ProcessIdentity}
 * (executable, PID, ancestors, SHA-256 of each), or why not. The policy decides what an identity admits; this package
 * only reads {@code /proc}.
 */
package dev.openshell.supervisor.identity;
