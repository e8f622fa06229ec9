package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.STABLE;

import dev.openshell.middleware.spi.internal.RpcTimeout;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.apiguardian.api.API;

/**
 * One hook a provider implements: a binding ID plus the operation and phase it runs at (RFC 0009, "The middleware
 * contract": {@code MiddlewareBinding}).
 *
 * @param id the stable binding ID policies select with {@code middleware:}
 * @param operation the operation hooked
 * @param phase the phase hooked; only restricted built-ins may use {@link Phase#POST_CREDENTIALS}
 * @param maxBodyBytes the largest body, in bytes, the binding accepts: 0 to {@link EnvelopeLimits#MAX_BODY_BYTES}
 * @param timeout the binding's own RPC timeout, which overrides the registration's: 10 ms to 30 s in whole
 *     milliseconds ({@link EnvelopeLimits#MIN_TIMEOUT_MILLIS} to {@link EnvelopeLimits#MAX_TIMEOUT_MILLIS}); empty
 *     when the binding does not advertise one
 * @param decodedContentCodings the content codings (RFC 9110 section 8.4.1, lowercase, for example {@code gzip},
 *     {@code deflate}) the binding asks the supervisor to decode before it runs: for a request whose
 *     {@code Content-Encoding} lists only codings the supervisor decodes ({@value #GZIP}, {@value #DEFLATE}) and the
 *     binding names, the stage receives the decoded body, without the {@code Content-Encoding} header. Empty (the
 *     default): the stage receives the body as sent. An addition to the published contract; a service that does not
 *     send it gets the default
 * @param skipEmptyBody whether the binding's answer to a request with an empty body is always a plain allow (no
 *     body, no header mutation, no finding, no metadata), so the supervisor need not ask: for a request whose body,
 *     as it would reach this stage (after earlier stages and any decoding), is empty, the stage is not invoked and
 *     records nothing (no per-stage HttpActivity event, RFC 0009 "Audit and logging", since there is no invocation);
 *     the skip is counted in {@code supervisor_stage_skipped_total}. Honored at
 *     {@link Phase#PRE_CREDENTIALS} only: a post-credentials stage always runs. A binding that has something to say
 *     about an empty body (metadata, a finding, a denial) must leave it {@code false}, the default. An addition to
 *     the published contract (wire field {@code skip_empty_body} 7); a service that does not send it is invoked for
 *     every request
 */
@API(status = STABLE, since = "0.1")
public record MiddlewareBinding(BindingId id, Operation operation, Phase phase, long maxBodyBytes,
                                Optional<Duration> timeout, Set<String> decodedContentCodings,
                                boolean skipEmptyBody) {
    /** The {@code gzip} content coding (RFC 9110 section 8.4.1.3). */
    public static final String GZIP = "gzip";
    /** The {@code deflate} content coding (RFC 9110 section 8.4.1.2). */
    public static final String DEFLATE = "deflate";

    /**
     * Checks ranges.
     *
     * @throws IllegalArgumentException if {@code maxBodyBytes} or {@code timeout} is out of range
     * @throws NullPointerException if any argument is {@code null}
     */
    @API(status = STABLE, since = "0.1")
    public MiddlewareBinding {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(operation, "operation");
        Objects.requireNonNull(phase, "phase");
        Objects.requireNonNull(timeout, "timeout");
        decodedContentCodings = Set.copyOf(decodedContentCodings);
        for (String c : decodedContentCodings) {
            if (c.isEmpty() || !c.chars().allMatch(ch -> (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')
                    || ch == '-' || ch == '.' || ch == '_')) {
                throw new IllegalArgumentException("binding '%s': a decoded content coding is not a lowercase token"
                        .formatted(id));
            }
        }
        if (maxBodyBytes < 0 || maxBodyBytes > EnvelopeLimits.MAX_BODY_BYTES) {
            throw new IllegalArgumentException("binding '%s': max body bytes %d is outside 0..%d"
                    .formatted(id, maxBodyBytes, EnvelopeLimits.MAX_BODY_BYTES));
        }
        timeout.ifPresent(t -> {
            String problem = RpcTimeout.problem(t);
            if (problem != null) {
                throw new IllegalArgumentException("binding '%s': invalid timeout %s: %s".formatted(id, t, problem));
            }
        });
    }

    /**
     * A binding that is invoked for every request, also one with an empty body ({@code skipEmptyBody} false): the
     * constructor of the SPI before {@link #skipEmptyBody()} was added, kept so that plugins built against it link.
     *
     * @param id the stable binding ID
     * @param operation the operation hooked
     * @param phase the phase hooked
     * @param maxBodyBytes the largest body accepted, in bytes
     * @param timeout the binding's own RPC timeout, if any
     * @param decodedContentCodings the content codings the binding asks to be decoded
     * @throws IllegalArgumentException if a value is out of range or a coding is not a lowercase token
     */
    @API(status = STABLE, since = "0.1")
    public MiddlewareBinding(BindingId id, Operation operation, Phase phase, long maxBodyBytes,
                             Optional<Duration> timeout, Set<String> decodedContentCodings) {
        this(id, operation, phase, maxBodyBytes, timeout, decodedContentCodings, false);
    }

    /**
     * A binding that receives bodies as sent (no decoded content codings).
     *
     * @param id the stable binding ID
     * @param operation the operation hooked
     * @param phase the phase hooked
     * @param maxBodyBytes the largest body accepted, in bytes
     * @param timeout the binding's own RPC timeout, if any
     * @throws IllegalArgumentException if {@code maxBodyBytes} or {@code timeout} is out of range
     */
    @API(status = STABLE, since = "0.1")
    public MiddlewareBinding(BindingId id, Operation operation, Phase phase, long maxBodyBytes,
                             Optional<Duration> timeout) {
        this(id, operation, phase, maxBodyBytes, timeout, Set.of(), false);
    }

    /**
     * {@return this binding asking for {@code codings} to be decoded before it runs}
     *
     * @param codings lowercase content codings, for example {@value #GZIP} and {@value #DEFLATE}
     */
    public MiddlewareBinding decoding(String... codings) {
        return new MiddlewareBinding(id, operation, phase, maxBodyBytes, timeout, Set.of(codings), skipEmptyBody);
    }

    /**
     * {@return this binding declaring that it allows every request with an empty body unchanged}, so that the
     * supervisor skips it there ({@link #skipEmptyBody()}). For a stage that judges the body only: a GET through a
     * chain of such stages then costs no invocation and no per-stage event.
     */
    public MiddlewareBinding skippingEmptyBody() {
        return new MiddlewareBinding(id, operation, phase, maxBodyBytes, timeout, decodedContentCodings, true);
    }

    /**
     * {@return an {@code HTTP_REQUEST/PRE_CREDENTIALS} binding without its own timeout}
     *
     * @param id a valid binding ID
     * @param maxBodyBytes the largest body accepted, in bytes
     * @throws IllegalArgumentException if the ID or the size is invalid
     */
    @API(status = STABLE, since = "0.1")
    public static MiddlewareBinding httpRequest(String id, long maxBodyBytes) {
        return new MiddlewareBinding(new BindingId(id), Operation.HTTP_REQUEST, Phase.PRE_CREDENTIALS, maxBodyBytes,
                Optional.empty());
    }

    /**
     * {@return an {@code HTTP_RESPONSE/PRE_RETURN} binding without its own timeout} The binding's
     * {@code maxBodyBytes} is the wire's {@code max_payload_bytes} for responses: the whole body and its replacement
     * in {@link HttpResponseBodyMode#WHOLE_BODY_BYTES}, each replacement in {@link HttpResponseBodyMode#STREAM_BYTES}.
     * Its provider overrides {@link MiddlewareProvider#openResponse}.
     *
     * @param id a valid binding ID
     * @param maxPayloadBytes the largest payload accepted, in bytes
     * @throws IllegalArgumentException if the ID or the size is invalid
     */
    @API(status = org.apiguardian.api.API.Status.EXPERIMENTAL, since = "0.2")
    public static MiddlewareBinding httpResponse(String id, long maxPayloadBytes) {
        return new MiddlewareBinding(new BindingId(id), Operation.HTTP_RESPONSE, Phase.PRE_RETURN, maxPayloadBytes,
                Optional.empty());
    }
}
