/**
 * Extension authentication (OpenShell RFC 0009 appendix "Extension Authentication"): the supervisor's Ed25519
 * signing keys under the state directory ({@link dev.openshell.supervisor.grpc.auth.SigningKeys}), the tokens it
 * sends to middleware services registered over TLS ({@link dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer}),
 * and the JWKS and discovery documents services verify them with. JOSE structure by nimbus-jose-jwt, Ed25519 by the
 * JDK.
 */
package dev.openshell.supervisor.grpc.auth;
