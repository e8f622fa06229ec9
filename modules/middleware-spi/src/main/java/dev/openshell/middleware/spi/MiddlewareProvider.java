package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;
import static org.apiguardian.api.API.Status.STABLE;

import jakarta.json.JsonObject;
import org.apiguardian.api.API;

/**
 * The one SPI every middleware implements, built-in or external (RFC 0009, "The middleware contract").
 *
 * <p>Built-ins and third-party plugins declare it in {@code module-info.java} with
 * {@code provides dev.openshell.middleware.spi.MiddlewareProvider with ...}; the supervisor finds them with
 * {@link java.util.ServiceLoader}, built-ins in the boot layer and third-party JARs in a child module layer. The
 * gRPC adapter implements it for external services.
 *
 * <p>Instances are shared by every request and must be thread-safe; {@link #evaluate} runs on virtual threads and
 * may block. The host calls {@link #manifest()} once at load time and then trusts nothing else the provider says
 * about itself: binding IDs, phases and body limits are checked, and results are validated before use.
 *
 * <h2>Rules the host enforces</h2>
 * <ul>
 *   <li>Binding IDs follow {@link BindingId}'s grammar; {@code openshell/} is reserved for built-ins shipped with the
 *       supervisor; a binding ID claimed twice is rejected with both owners named.</li>
 *   <li>Only restricted built-ins may bind {@link Phase#POST_CREDENTIALS}.</li>
 *   <li>Any {@link Throwable} from {@link #validateConfig} or {@link #evaluate} (other than a
 *       {@link VirtualMachineError}) is a stage failure, never a supervisor crash.</li>
 * </ul>
 */
@API(status = STABLE, since = "0.1")
public interface MiddlewareProvider {
    /**
     * Describes the provider (wire {@code Describe}). Called once when the provider is loaded.
     *
     * @return the manifest; never {@code null}
     */
    @API(status = STABLE, since = "0.1")
    MiddlewareManifest manifest();

    /**
     * Checks a middleware config from policy before the policy is accepted (wire {@code ValidateConfig}).
     *
     * @param bindingId one of this provider's binding IDs
     * @param config the config mapping from policy, as JSON; never {@code null}, possibly empty
     * @return whether the config is valid, and why not; never {@code null}
     */
    @API(status = STABLE, since = "0.1")
    ConfigValidation validateConfig(BindingId bindingId, JsonObject config);

    /**
     * Evaluates one request (wire {@code EvaluateHttpRequest}). The host enforces the stage's timeout.
     *
     * @param evaluation the request as the previous stage left it; never {@code null}
     * @return the result; never {@code null}
     * @throws MiddlewareException when the stage cannot produce a result (a stage failure, handled by
     *     {@code on_error}); any other exception is handled the same way
     */
    @API(status = STABLE, since = "0.1")
    HttpRequestResult evaluate(HttpRequestEvaluation evaluation);

    /**
     * Opens one stage session over one HTTP response (wire {@code HttpResponsePreReturn.Evaluate}) for a binding of
     * this provider with operation {@link Operation#HTTP_RESPONSE} and phase {@link Phase#PRE_RETURN}. The host calls
     * it only for such bindings. The default refuses: a provider that declares a response binding overrides it.
     *
     * @param bindingId one of this provider's {@code HTTP_RESPONSE/PRE_RETURN} binding IDs
     * @return a new session; never {@code null}
     * @throws UnsupportedOperationException when the provider has no response binding (a stage failure)
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    default HttpResponseStage openResponse(BindingId bindingId) {
        throw new UnsupportedOperationException("this provider does not evaluate responses");
    }

    /**
     * Opens this provider's stream for one WebSocket session in one direction (wire
     * {@code EvaluateWebSocketSession}). Called only for a provider whose manifest lists a
     * {@link Operation#WEBSOCKET_MESSAGE} binding with the binding ID of the session's config and the stream's phase
     * ({@link Phase#PRE_CREDENTIALS}: client-to-upstream; {@link Phase#PRE_RETURN}: upstream-to-client, an addition to
     * the published contract). The default throws: a provider without a message binding is never asked.
     *
     * @param bindingId the config's binding ID
     * @param phase the direction
     * @return a new session stream; never {@code null}
     * @throws UnsupportedOperationException when the provider has no message binding (the default)
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    default WebSocketSession openWebSocketSession(BindingId bindingId, Phase phase) {
        throw new UnsupportedOperationException("this provider has no WEBSOCKET_MESSAGE binding");
    }
}
