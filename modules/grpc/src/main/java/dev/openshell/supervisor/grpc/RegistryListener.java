package dev.openshell.supervisor.grpc;

import java.net.URI;

/**
 * Receives the registry's configuration and availability events, for audit (OCSF configuration state) and metrics.
 * Every method has an empty default; implementations must be thread-safe and must not block (they run on the
 * start-up thread, on request threads and on the background probe's virtual thread). An exception thrown here is
 * logged and otherwise ignored.
 *
 * <p>Arguments carry only registration names, endpoints (operator configuration) and stable codes, never text a
 * service sent.
 */
public interface RegistryListener {
    /** A listener that ignores every event. */
    RegistryListener NONE = new RegistryListener() {
    };

    /**
     * A plaintext {@code http://} registration with {@code allow_insecure = true} was accepted for connection (RFC
     * 0009, "Registration and delivery": "warns prominently, and records the insecure registration as auditable
     * configuration state"). Called once per such registration at start-up, before connecting.
     *
     * @param name the registration name
     * @param endpoint the plaintext endpoint
     */
    default void plaintextRegistration(String name, URI endpoint) {
    }

    /**
     * A service that was available became unavailable after start-up; its stages now fail with
     * {@link StageFailureCodes#SERVICE_UNAVAILABLE} until it recovers. Called once per outage.
     *
     * @param name the registration name
     * @param code the failure code that revealed the outage
     */
    default void serviceUnavailable(String name, String code) {
    }

    /**
     * A service answered the background probe again with a matching manifest; its stages are usable again. Called
     * once per outage.
     *
     * @param name the registration name
     * @param attempts the number of probes the recovery took
     */
    default void serviceRecovered(String name, int attempts) {
    }

    /**
     * A service came back with a manifest that no longer matches the registered bindings; its stages keep failing
     * with {@link StageFailureCodes#SERVICE_MANIFEST_CHANGED}. Called once per outage.
     *
     * @param name the registration name
     * @param problem a safe description of the difference
     */
    default void serviceManifestChanged(String name, String problem) {
    }
}
