package dev.openshell.supervisor.policy;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.EnvelopeLimits;

import java.util.Objects;
import java.util.function.Function;

import jakarta.json.JsonObject;

/**
 * What the plugin host knows about one binding, as policy validation needs it (RFC 0009, "Registration and
 * delivery" and "Contract versioning": "policy asks for an unsupported binding or invalid config").
 *
 * <p>Implemented by the engine's registry; {@link #of} builds a simple instance (for tests and tools).
 */
public interface BindingFacts {
    /** Who provides a binding. */
    enum OwnerKind {
        /** Shipped with the supervisor, in the boot layer; the only kind that may use {@code openshell/}. */
        BUILTIN("built-in"),
        /** A third-party JAR loaded from the plugins directory. */
        PLUGIN("plugin"),
        /** An external service registered in the gateway configuration and reached over gRPC. */
        EXTERNAL("external service");

        private final String description;

        OwnerKind(String description) {
            this.description = description;
        }

        /** {@return how messages name this kind, for example {@code external service}} */
        public String description() {
            return description;
        }
    }

    /** {@return the binding ID} */
    BindingId id();

    /** {@return who provides the binding} */
    OwnerKind ownerKind();

    /** {@return the provider's name: the module name of a built-in or plugin, the registration name of a service} */
    String ownerName();

    /** {@return the largest body, in bytes, the binding accepts (0..4 MiB)} */
    long maxBodyBytes();

    /**
     * Asks the binding's provider whether {@code config} is acceptable ({@code ValidateConfig}).
     *
     * @param config the middleware config from policy; never {@code null}
     * @return the answer; never {@code null}
     * @throws RuntimeException if the provider cannot answer (policy validation reports it as an error)
     */
    ConfigValidation validate(JsonObject config);

    /**
     * {@return whether the binding's provider reads WebSocket client messages ({@code WEBSOCKET_MESSAGE/
     * PRE_CREDENTIALS})} A {@code fail_closed} config of such a binding joins a session's message chain instead of
     * refusing the upgrade, so no load-time warning is due. The default: {@code false}.
     */
    default boolean readsWebSocketMessages() {
        return false;
    }

    /**
     * {@return these facts, saying whether the provider reads WebSocket client messages}
     *
     * @param reads whether it does
     */
    default BindingFacts readingWebSocketMessages(boolean reads) {
        BindingFacts self = this;
        return new BindingFacts() {
            @Override
            public BindingId id() {
                return self.id();
            }

            @Override
            public OwnerKind ownerKind() {
                return self.ownerKind();
            }

            @Override
            public String ownerName() {
                return self.ownerName();
            }

            @Override
            public long maxBodyBytes() {
                return self.maxBodyBytes();
            }

            @Override
            public ConfigValidation validate(JsonObject config) {
                return self.validate(config);
            }

            @Override
            public boolean readsWebSocketMessages() {
                return reads;
            }
        };
    }

    /**
     * {@return simple facts backed by a function}
     *
     * @param id the binding ID
     * @param ownerKind who provides it
     * @param ownerName the provider's name
     * @param maxBodyBytes the largest body accepted, 0 to {@link EnvelopeLimits#MAX_BODY_BYTES}
     * @param validator the {@code ValidateConfig} implementation
     * @throws IllegalArgumentException if {@code maxBodyBytes} is out of range
     */
    static BindingFacts of(BindingId id, OwnerKind ownerKind, String ownerName, long maxBodyBytes,
                           Function<JsonObject, ConfigValidation> validator) {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(ownerKind, "ownerKind");
        Objects.requireNonNull(ownerName, "ownerName");
        Objects.requireNonNull(validator, "validator");
        if (maxBodyBytes < 0 || maxBodyBytes > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new IllegalArgumentException("max body bytes " + maxBodyBytes + " is outside 0.."
                    + EnvelopeLimits.MAX_BODY_BYTES);
        }
        record Simple(BindingId id, OwnerKind ownerKind, String ownerName, long maxBodyBytes,
                      Function<JsonObject, ConfigValidation> validator) implements BindingFacts {
            @Override
            public ConfigValidation validate(JsonObject config) {
                return validator.apply(config);
            }
        }
        return new Simple(id, ownerKind, ownerName, maxBodyBytes, validator);
    }
}
