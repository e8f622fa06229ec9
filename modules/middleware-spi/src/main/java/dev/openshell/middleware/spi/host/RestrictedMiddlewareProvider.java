package dev.openshell.middleware.spi.host;

import static org.apiguardian.api.API.Status.INTERNAL;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.MiddlewareProvider;
import jakarta.json.JsonObject;
import org.apiguardian.api.API;

/**
 * A built-in that needs supervisor-only capabilities, such as {@code openshell/sigv4} in the post-credentials
 * phase. The engine binds capabilities only to providers whose module is in the boot layer and on the engine's list
 * of restricted built-ins; every other implementation is refused at load time.
 *
 * <p>A post-credentials binding is invoked through {@link #evaluatePostCredentials}, never through
 * {@link MiddlewareProvider#evaluate} (which such a provider may reject with a {@link MiddlewareException}).
 */
@API(status = INTERNAL, since = "0.1")
public interface RestrictedMiddlewareProvider extends MiddlewareProvider {
    /**
     * Receives the host capabilities. Called once, before the first evaluation.
     *
     * @param capabilities the capabilities; never {@code null}
     */
    void bind(HostCapabilities capabilities);

    /**
     * Transforms the final request after credential injection (for example, signs it), resolving credentials through
     * the capabilities given to {@link #bind}. The engine calls
     * {@link #evaluatePostCredentials(BindingId, JsonObject, OutboundRequest, CredentialAccess)}, whose default calls
     * this.
     *
     * @param bindingId one of this provider's {@code POST_CREDENTIALS} bindings
     * @param config the middleware config from policy
     * @param request the request as it will be forwarded
     * @return the request to forward; never {@code null}
     * @throws MiddlewareException when the stage cannot complete (handled by the config's {@code on_error})
     */
    OutboundRequest evaluatePostCredentials(BindingId bindingId, JsonObject config, OutboundRequest request);

    /**
     * Transforms the final request after credential injection (for example, signs it), resolving credentials through
     * {@code credentials}: those of the policy generation serving this request, which may differ from the current
     * one during a reload. The engine invokes this, in the post-credentials phase, with the same fold, failure policy
     * ({@code on_error}), limits and timeout as any stage, and checks the answer: the target and body must be
     * unchanged, the {@code Host} fields unchanged, and no framing or hop-by-hop header may be added (the request
     * holds none); a broken rule fails the stage. The default ignores {@code credentials} and calls
     * {@link #evaluatePostCredentials(BindingId, JsonObject, OutboundRequest)}.
     *
     * @param bindingId one of this provider's {@code POST_CREDENTIALS} bindings
     * @param config the middleware config from policy
     * @param request the request as it will be forwarded
     * @param credentials credential resolution for this request; never {@code null}
     * @return the request to forward; never {@code null}
     * @throws MiddlewareException when the stage cannot complete (handled by the config's {@code on_error})
     */
    default OutboundRequest evaluatePostCredentials(BindingId bindingId, JsonObject config, OutboundRequest request,
                                                    CredentialAccess credentials) {
        return evaluatePostCredentials(bindingId, config, request);
    }
}
