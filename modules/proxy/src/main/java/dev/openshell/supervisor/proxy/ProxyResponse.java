package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpResponseBodyMode;
import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;

/**
 * The final upstream response head as the response step sees it ({@link PolicySteps.ResponseChain}): status, the
 * end-to-end fields as they will be delivered (hop-by-hop fields removed; a response the proxy decodes shown without
 * {@code Content-Encoding} and {@code Content-Length}), and the facts of the original head that decide the
 * permitted body modes.
 *
 * @param status the final status, 200 to 999 (never a {@code 1xx}, never a {@code 101})
 * @param headers the fields, names lowercase, in order
 * @param nominated the lowercase names the upstream's {@code Connection} field nominates
 * @param shape what the original head says about the body
 */
public record ProxyResponse(int status, List<HttpHeader> headers, Set<String> nominated, Shape shape) {
    /** @throws NullPointerException if a part is {@code null} */
    public ProxyResponse {
        headers = List.copyOf(headers);
        nominated = Set.copyOf(nominated);
        Objects.requireNonNull(shape, "shape");
    }

    /**
     * What the original head says about the body (NVIDIA/OpenShell {@code HttpResponsePreflight.permitted_body_modes}).
     *
     * @param bodyless a response to {@code HEAD}, a {@code 204} or a {@code 304}
     * @param partial a {@code 206}, a {@code Content-Range}, or {@code multipart/byteranges}
     * @param noTransform the original {@code Cache-Control} holds {@code no-transform}
     * @param openEnded a media type defined as an open-ended stream ({@code text/event-stream},
     *     {@code multipart/x-mixed-replace})
     * @param inspectable the content coding is identity, or {@code gzip}/{@code deflate} which the proxy decodes
     * @param declaredLength the identity body's {@code Content-Length}, when declared
     */
    public record Shape(boolean bodyless, boolean partial, boolean noTransform, boolean openEnded,
                        boolean inspectable, OptionalLong declaredLength) {
        /** @throws NullPointerException if {@code declaredLength} is {@code null} */
        public Shape {
            Objects.requireNonNull(declaredLength, "declaredLength");
        }
    }

    /**
     * {@return the body modes a stage with limit {@code maxPayloadBytes} may select} Always HEADERS_ONLY. Bodyless,
     * partial, {@code no-transform} and uninspectable codings: HEADERS_ONLY only. Open-ended streams and a declared
     * length over the limit: no WHOLE_BODY_BYTES.
     *
     * @param maxPayloadBytes the stage's effective limit, in bytes
     */
    public Set<HttpResponseBodyMode> permittedBodyModes(long maxPayloadBytes) {
        if (shape.bodyless() || shape.partial() || shape.noTransform() || !shape.inspectable()) {
            return EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY);
        }
        EnumSet<HttpResponseBodyMode> modes = EnumSet.of(HttpResponseBodyMode.HEADERS_ONLY,
                HttpResponseBodyMode.STREAM_BYTES);
        boolean over = shape.declaredLength().isPresent() && shape.declaredLength().getAsLong() > maxPayloadBytes;
        if (!shape.openEnded() && !over) {
            modes.add(HttpResponseBodyMode.WHOLE_BODY_BYTES);
        }
        return modes;
    }

    /** {@return the status and counts only} */
    @Override
    public String toString() {
        return "ProxyResponse[" + status + ", " + headers.size() + " headers, " + shape + "]";
    }
}
