package dev.openshell.supervisor.grpc.tck;

import dev.openshell.supervisor.engine.chain.StageLimits;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import dev.openshell.supervisor.grpc.auth.ExtensionTokenIssuer;
import jakarta.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@code supervisor tck} checks and how.
 *
 * @param registration the service as an operator would register it: endpoint ({@code http://} with
 *     {@code allow_insecure}, or {@code https://} with the CA bundle and client certificate), the service timeout
 *     (default 500 ms, the platform's), and a registration name (the binding ID of a service that sends none); its
 *     {@code max_body_bytes} is ignored: the kit registers the smallest capability the service advertises, at most
 *     4 MiB
 * @param bindingId the binding to exercise; empty for the first one the service advertises
 * @param config the config sent with {@code ValidateConfig} and every evaluation ({@code {}} if none is given)
 * @param samples evaluations per body size for the latency checks, 1 to 1000
 * @param load concurrent evaluations of the load check; 0 to skip it
 * @param loadDuration how long the load check runs, 1 to 60 s
 * @param limits the envelope limits, shared with the supervisor's chain engine ({@link StageLimits#DEFAULT} except in
 *     tests)
 * @param bodies the author's own bodies ({@code --body FILE}), each sent once after the {@linkplain Probe#builtIns()
 *     built-in probes}; unmodifiable
 * @param tokens the supervisor's extension token issuer: every call over TLS carries its token, and the
 *     {@code auth.*} checks mint missing, expired, wrong-audience and wrong-key tokens; empty sends none and skips them
 */
public record TckOptions(ServiceRegistration registration, Optional<String> bindingId, JsonObject config, int samples,
                         int load, Duration loadDuration, StageLimits limits, List<Probe> bodies,
                         Optional<ExtensionTokenIssuer> tokens) {
    /** Default {@link #samples}. */
    public static final int DEFAULT_SAMPLES = 20;
    /** Default {@link #loadDuration}. */
    public static final Duration DEFAULT_LOAD_DURATION = Duration.ofSeconds(3);

    /**
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if a number is out of range
     */
    public TckOptions {
        Objects.requireNonNull(registration, "registration");
        Objects.requireNonNull(bindingId, "bindingId");
        Objects.requireNonNull(config, "config");
        Objects.requireNonNull(loadDuration, "loadDuration");
        Objects.requireNonNull(limits, "limits");
        bodies = List.copyOf(bodies);
        Objects.requireNonNull(tokens, "tokens");
        if (samples < 1 || samples > 1000) {
            throw new IllegalArgumentException("samples " + samples + " is outside 1..1000");
        }
        if (load < 0 || load > 1000) {
            throw new IllegalArgumentException("load " + load + " is outside 0..1000");
        }
        if (loadDuration.compareTo(Duration.ofSeconds(1)) < 0 || loadDuration.compareTo(Duration.ofSeconds(60)) > 0) {
            throw new IllegalArgumentException("load duration " + loadDuration + " is outside 1..60 s");
        }
    }

    /**
     * Options without {@code --body} files and without extension tokens.
     *
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if a number is out of range
     */
    public TckOptions(ServiceRegistration registration, Optional<String> bindingId, JsonObject config, int samples,
                      int load, Duration loadDuration, StageLimits limits) {
        this(registration, bindingId, config, samples, load, loadDuration, limits, List.of(), Optional.empty());
    }

    /**
     * Options with {@code --body} files, without extension tokens.
     *
     * @throws NullPointerException if any part is {@code null}
     * @throws IllegalArgumentException if a number is out of range
     */
    public TckOptions(ServiceRegistration registration, Optional<String> bindingId, JsonObject config, int samples,
                      int load, Duration loadDuration, StageLimits limits, List<Probe> bodies) {
        this(registration, bindingId, config, samples, load, loadDuration, limits, bodies, Optional.empty());
    }

    /** {@return these options with the supervisor's token issuer} @param issuer the issuer */
    public TckOptions withTokens(ExtensionTokenIssuer issuer) {
        return new TckOptions(registration, bindingId, config, samples, load, loadDuration, limits, bodies,
                Optional.of(issuer));
    }

    /** {@return options with the defaults: first binding, {@code {}}, 20 samples, no load, contract limits}
     * @param registration the service */
    public static TckOptions of(ServiceRegistration registration) {
        return new TckOptions(registration, Optional.empty(), JsonObject.EMPTY_JSON_OBJECT, DEFAULT_SAMPLES, 0,
                DEFAULT_LOAD_DURATION, StageLimits.DEFAULT);
    }
}
