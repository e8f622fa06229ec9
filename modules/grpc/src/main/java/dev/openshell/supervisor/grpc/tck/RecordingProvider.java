package dev.openshell.supervisor.grpc.tck;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import jakarta.json.JsonObject;

/** The supervisor's adapter, remembering the last result it returned (for the figures). */
final class RecordingProvider implements MiddlewareProvider {
    private final MiddlewareProvider delegate;
    volatile HttpRequestResult last;

    RecordingProvider(MiddlewareProvider delegate) {
        this.delegate = delegate;
    }

    /**
     * The delegate's manifest with every binding invoked on an empty body too: the kit asks what the supervisor
     * would skip ({@code skip_empty_body}), to check the declaration.
     */
    @Override
    public MiddlewareManifest manifest() {
        MiddlewareManifest m = delegate.manifest();
        return new MiddlewareManifest(m.name(), m.serviceVersion(), m.bindings().stream()
                .map(b -> new MiddlewareBinding(b.id(), b.operation(), b.phase(), b.maxBodyBytes(), b.timeout(),
                        b.decodedContentCodings()))
                .toList());
    }

    @Override
    public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
        return delegate.validateConfig(bindingId, config);
    }

    @Override
    public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
        HttpRequestResult r = delegate.evaluate(evaluation);
        last = r;
        return r;
    }
}
