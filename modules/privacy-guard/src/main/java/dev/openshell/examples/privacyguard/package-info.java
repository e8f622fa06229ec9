/**
 * Privacy Guard: {@link dev.openshell.examples.privacyguard.PrivacyGuardServer} runs the service,
 * {@link dev.openshell.examples.privacyguard.PrivacyGuardService} implements {@code openshell.middleware.v1}.
 * Configuration per policy, detection rules and findings are described on {@code PrivacyGuardService} and in
 * {@code docs/external-middleware.md}.
 */
package dev.openshell.examples.privacyguard;
