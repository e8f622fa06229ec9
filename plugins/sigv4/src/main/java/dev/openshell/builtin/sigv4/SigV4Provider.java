package dev.openshell.builtin.sigv4;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.Operation;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.host.CredentialAccess;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.middleware.spi.host.RestrictedMiddlewareProvider;
import dev.openshell.middleware.spi.host.Secret;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * {@code openshell/sigv4}: a restricted built-in in the post-credentials phase that strips the sandbox's placeholder
 * signature and signs the final request with AWS Signature Version 4, using credentials resolved through the
 * supervisor-only {@link dev.openshell.middleware.spi.host.CredentialAccess} for the request's host.
 *
 * <h2>Config (policy {@code config:} mapping)</h2>
 * <ul>
 *   <li>{@code region} (required): for example {@code us-east-1}.</li>
 *   <li>{@code service} (required): for example {@code execute-api}, {@code s3}. For {@code s3} the path is not
 *       normalised and {@code X-Amz-Content-Sha256} is always sent.</li>
 *   <li>{@code payload}: {@code signed} (default; SHA-256 of the body) or {@code unsigned}
 *       ({@code UNSIGNED-PAYLOAD}).</li>
 *   <li>{@code access_key_id}, {@code secret_access_key}: names of credentials declared in the gateway
 *       configuration (defaults {@code AWS_ACCESS_KEY_ID}, {@code AWS_SECRET_ACCESS_KEY}); {@code session_token}:
 *       optional credential name, sent as {@code X-Amz-Security-Token} and signed.</li>
 *   <li>{@code content_sha256_header}: whether to send {@code X-Amz-Content-Sha256} (default: only for
 *       {@code s3}).</li>
 * </ul>
 * Stripped from the request before signing: {@code Authorization}, {@code X-Amz-Date},
 * {@code X-Amz-Security-Token}, {@code X-Amz-Content-Sha256}. Signed: {@code Host} (the one the request carries,
 * which the proxy checked against the admitted target and the engine never lets this stage change; for an HTTP/1.0
 * request without one, the target's authority, added) and
 * every other end-to-end header except those {@link SigV4Signer#unsigned} names.
 */
public final class SigV4Provider implements RestrictedMiddlewareProvider {
    /** The binding ID. */
    public static final String BINDING_ID = "openshell/sigv4";
    private static final Set<String> KEYS = Set.of("region", "service", "payload", "access_key_id",
            "secret_access_key", "session_token", "content_sha256_header");
    /** Replaced by the signature; the Host that is sent (which the engine never lets a stage change) is kept. */
    private static final Set<String> STRIPPED = Set.of("authorization", "x-amz-date", "x-amz-security-token",
            "x-amz-content-sha256");

    private final Clock clock;
    private volatile HostCapabilities capabilities;

    /** Creates the provider (called by {@link java.util.ServiceLoader}). */
    public SigV4Provider() {
        this(Clock.systemUTC());
    }

    SigV4Provider(Clock clock) {
        this.clock = clock;
    }

    @Override
    public MiddlewareManifest manifest() {
        return new MiddlewareManifest("openshell-sigv4", "1", List.of(new MiddlewareBinding(
                new BindingId(BINDING_ID), Operation.HTTP_REQUEST, Phase.POST_CREDENTIALS,
                EnvelopeLimits.MAX_BODY_BYTES, Optional.empty())));
    }

    @Override
    public void bind(HostCapabilities host) {
        this.capabilities = host;
    }

    @Override
    public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
        for (String key : config.keySet()) {
            if (!KEYS.contains(key)) {
                return ConfigValidation.invalid("unknown key '" + key + "' (accepted: " + String.join(", ",
                        KEYS.stream().sorted().toList()) + ")");
            }
        }
        for (String required : List.of("region", "service")) {
            String v = string(config, required);
            if (v == null || !v.matches("[a-z0-9-]{1,64}")) {
                return ConfigValidation.invalid("'" + required + "' is required: 1 to 64 of a-z 0-9 -");
            }
        }
        String payload = string(config, "payload");
        if (config.containsKey("payload") && !"signed".equals(payload) && !"unsigned".equals(payload)) {
            return ConfigValidation.invalid("'payload' must be 'signed' or 'unsigned'");
        }
        for (String name : List.of("access_key_id", "secret_access_key", "session_token")) {
            if (config.containsKey(name)) {
                String v = string(config, name);
                if (v == null || !v.matches("[A-Za-z_][A-Za-z0-9_]{0,127}")) {
                    return ConfigValidation.invalid("'" + name + "' must name a credential ([A-Za-z_][A-Za-z0-9_]*)");
                }
            }
        }
        JsonValue sha = config.get("content_sha256_header");
        if (sha != null && sha != JsonValue.TRUE && sha != JsonValue.FALSE) {
            return ConfigValidation.invalid("'content_sha256_header' must be true or false");
        }
        return ConfigValidation.ok();
    }

    /** Always fails: this binding runs only in the post-credentials phase. */
    @Override
    public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
        throw new MiddlewareException("wrong_phase", "openshell/sigv4 runs only in the post-credentials phase");
    }

    @Override
    public OutboundRequest evaluatePostCredentials(BindingId bindingId, JsonObject config, OutboundRequest request) {
        HostCapabilities caps = capabilities;
        if (caps == null) {
            throw new MiddlewareException("capabilities_unavailable", "openshell/sigv4 has no host capabilities");
        }
        return evaluatePostCredentials(bindingId, config, request, caps.credentials());
    }

    /** Signs with the credentials of the generation serving the request. */
    @Override
    public OutboundRequest evaluatePostCredentials(BindingId bindingId, JsonObject config, OutboundRequest request,
                                                   CredentialAccess credentials) {
        HttpRequestTarget t = request.target();
        String region = string(config, "region");
        String service = string(config, "service");
        boolean s3 = "s3".equals(service);
        boolean unsigned = "unsigned".equals(string(config, "payload"));
        boolean shaHeader = config.containsKey("content_sha256_header")
                ? config.getBoolean("content_sha256_header") : s3;
        String akName = stringOr(config, "access_key_id", "AWS_ACCESS_KEY_ID");
        String skName = stringOr(config, "secret_access_key", "AWS_SECRET_ACCESS_KEY");
        String tokenName = string(config, "session_token");

        try (Secret accessKey = resolve(credentials, akName, t.host());
             Secret secretKey = resolve(credentials, skName, t.host());
             Secret token = tokenName == null ? null : resolve(credentials, tokenName, t.host())) {
            Instant now = clock.instant();
            String payloadHash = unsigned ? SigV4Signer.UNSIGNED_PAYLOAD
                    : SigV4Signer.sha256Hex(request.body().segments());
            List<HttpHeader> out = new ArrayList<>();
            boolean hasHost = false;
            for (HttpHeader h : request.headers()) {
                String lower = h.name().toLowerCase(Locale.ROOT);
                hasHost |= lower.equals("host");
                if (!STRIPPED.contains(lower)) {
                    out.add(h);
                }
            }
            if (!hasHost) {
                // only an HTTP/1.0 request comes without one; the signature must cover the Host that is sent
                out.add(0, new HttpHeader("Host", hostHeader(t)));
            }
            out.add(new HttpHeader("X-Amz-Date", SigV4Signer.amzDate(now)));
            if (token != null) {
                out.add(new HttpHeader("X-Amz-Security-Token", token.reveal()));
            }
            if (shaHeader) {
                out.add(new HttpHeader("X-Amz-Content-Sha256", payloadHash));
            }
            List<SigV4Signer.Header> toSign = out.stream()
                    .filter(h -> !SigV4Signer.unsigned(h.name().toLowerCase(Locale.ROOT)))
                    .map(h -> new SigV4Signer.Header(h.name(), h.value())).toList();
            SigV4Signer.Signature sig = SigV4Signer.sign(t.method(), t.path(), t.query(), toSign, payloadHash,
                    accessKey.reveal(), secretKey.revealBytes(), region, service, now);
            out.add(new HttpHeader("Authorization", sig.authorization()));
            return request.withHeaders(out);
        }
    }

    private static Secret resolve(CredentialAccess credentials, String name, String host) {
        return credentials.resolve(name, host).orElseThrow(() -> new MiddlewareException(
                "credential_unavailable", "credential '" + name + "' is not available for this host"));
    }

    private static String hostHeader(HttpRequestTarget t) {
        boolean defaultPort = (t.scheme().equals("https") && t.port() == 443)
                || (t.scheme().equals("http") && t.port() == 80);
        String host = t.host().contains(":") ? "[" + t.host() + "]" : t.host();
        return defaultPort ? host : host + ":" + t.port();
    }

    private static String string(JsonObject config, String key) {
        return config.get(key) instanceof JsonString s ? s.getString() : null;
    }

    private static String stringOr(JsonObject config, String key, String fallback) {
        String v = string(config, key);
        return v == null ? fallback : v;
    }
}
