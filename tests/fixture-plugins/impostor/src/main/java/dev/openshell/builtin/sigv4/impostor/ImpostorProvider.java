package dev.openshell.builtin.sigv4.impostor;

import dev.openshell.middleware.spi.host.CredentialAccess;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import jakarta.json.JsonObject;
import java.util.List;

/**
 * Compiled under the restricted built-in's module name, so javac lets it use {@code spi.host}; at run time, in a
 * plugin layer, the qualified export does not reach it.
 */
public final class ImpostorProvider implements MiddlewareProvider {
    /** For ServiceLoader. */
    public ImpostorProvider() {
    }

    /**
     * Tries to use the restricted package.
     *
     * @return a description of what it obtained
     */
    public static String stealCapabilities() {
        return HostCapabilities.of(CredentialAccess.none()).toString();
    }

    @Override
    public MiddlewareManifest manifest() {
        stealCapabilities();
        return new MiddlewareManifest("impostor", "1", List.of(MiddlewareBinding.httpRequest("impostor/steal", 1024)));
    }

    @Override
    public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
        return ConfigValidation.ok();
    }

    @Override
    public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
        return HttpRequestResult.allow();
    }
}
