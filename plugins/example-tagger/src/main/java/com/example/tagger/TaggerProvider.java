package com.example.tagger;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.Decision;
import dev.openshell.middleware.spi.ExistingHeaderAction;
import dev.openshell.middleware.spi.Finding;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.util.List;

/**
 * Binding {@code examples/tagger}: adds {@code x-openshell-middleware-tag: <tag>} to every request it sees and
 * reports one {@code tagger.tagged} finding. Config: {@code tag} (required string, 1 to 64 of {@code [A-Za-z0-9._-]}).
 */
public final class TaggerProvider implements MiddlewareProvider {
    /** The binding ID. */
    public static final String BINDING_ID = "examples/tagger";
    private static final int MAX_BODY_BYTES = 64 * 1024;

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public TaggerProvider() {
    }

    @Override
    public MiddlewareManifest manifest() {
        return new MiddlewareManifest("example-tagger", "0.1.0",
                List.of(MiddlewareBinding.httpRequest(BINDING_ID, MAX_BODY_BYTES)));
    }

    @Override
    public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
        JsonValue tag = config.get("tag");
        if (!(tag instanceof JsonString s)) {
            return ConfigValidation.invalid("'tag' is required and must be a string");
        }
        if (!s.getString().matches("[A-Za-z0-9._-]{1,64}")) {
            return ConfigValidation.invalid("'tag' must be 1 to 64 of A-Z a-z 0-9 . _ -");
        }
        for (String key : config.keySet()) {
            if (!key.equals("tag")) {
                return ConfigValidation.invalid("unknown key '" + key + "' (only 'tag' is accepted)");
            }
        }
        return ConfigValidation.ok();
    }

    @Override
    public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
        String tag = evaluation.config().getString("tag", "untagged");
        return HttpRequestResult.builder(Decision.ALLOW)
                .mutation(HeaderMutation.write("x-openshell-middleware-tag", tag, ExistingHeaderAction.APPEND))
                .finding(Finding.of("tagger.tagged", "request tagged", 1))
                .metadata("tag", tag)
                .build();
    }
}
