package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.HeaderMutation;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.internal.Syntax;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The response-header rules of {@code HTTP_RESPONSE/PRE_RETURN} stages (NVIDIA/OpenShell
 * {@code proto/supervisor_middleware.proto}, {@code HttpResponsePreflight.headers} and
 * {@code HttpResponsePreflightInspect.header_mutations}): one protected set for responses, replacing the request-only
 * rule that writes stay in {@code x-openshell-middleware-*}.
 *
 * <ul>
 *   <li><b>Hidden</b> from stages (never shown, never mutable): credential fields ({@code set-cookie},
 *       {@code authorization}, {@code proxy-authenticate}, {@code proxy-authorization}, {@code cookie},
 *       {@code x-openshell-credential*}), routing ({@code host}), hop-by-hop ({@code connection}, {@code keep-alive},
 *       {@code proxy-connection}, {@code te}, {@code trailer}, {@code upgrade}) and Connection-nominated fields.</li>
 *   <li><b>Read-only</b> (shown, not mutable): framing ({@code content-length}, {@code transfer-encoding}), coding
 *       ({@code content-encoding}) and range ({@code content-range}, {@code accept-ranges}).</li>
 *   <li><b>Integrity</b> fields ({@code content-md5}, {@code digest}, {@code content-digest}, {@code repr-digest},
 *       {@code etag}) may be removed, not written: a transformed body invalidates them.</li>
 * </ul>
 * A stage's mutations are validated as a whole and applied atomically, in order: the first broken rule rejects all of
 * them (a stage failure, {@code on_error}). At most {@link EnvelopeLimits#MAX_HEADER_MUTATIONS} mutations and
 * {@link EnvelopeLimits#MAX_HEADER_MUTATION_BYTES} bytes of names and values.
 */
public final class ResponseHeaderRules {
    /** The response's own credential fields; the rest of the hidden set is {@link HeaderTable}'s. */
    private static final Set<String> RESPONSE_CREDENTIALS = Set.of("set-cookie", "set-cookie2");

    private ResponseHeaderRules() {
    }

    /** {@return whether a stage never sees a field} @param lower a lowercase field name */
    public static boolean hidden(String lower) {
        if (RESPONSE_CREDENTIALS.contains(lower) || lower.startsWith("x-openshell-credential")) {
            return true;
        }
        // the exact credential names, routing and hop-by-hop rows (not the x-amz- prefix: S3 answers with its own)
        return HeaderTable.row(lower).map(r -> r.kind() == HeaderTable.Kind.ROUTING
                || r.kind() == HeaderTable.Kind.HOP_BY_HOP || (r.kind() == HeaderTable.Kind.CREDENTIAL && !r.prefix()))
                .orElse(false);
    }

    /** {@return whether a stage may neither write nor remove a field} @param lower a lowercase field name */
    public static boolean protectedName(String lower) {
        return hidden(lower) || HeaderTable.responseReadOnly(lower);
    }

    /** {@return whether a field may be removed but not written} @param lower a lowercase field name */
    public static boolean integrity(String lower) {
        return HeaderTable.responseIntegrity(lower);
    }

    /**
     * {@return the fields a stage sees: every field but the hidden and nominated ones, in order}
     *
     * @param headers the complete response head's fields, names lowercase
     * @param nominated the lowercase names the response's {@code Connection} field nominates
     */
    public static List<HttpHeader> visible(List<HttpHeader> headers, Set<String> nominated) {
        List<HttpHeader> out = new ArrayList<>(headers.size());
        for (HttpHeader h : headers) {
            String lower = h.name().toLowerCase(Locale.ROOT);
            if (!hidden(lower) && !nominated.contains(lower)) {
                out.add(h);
            }
        }
        return out;
    }

    /**
     * Validates a stage's mutations and, when all are valid, applies them in order.
     *
     * @param headers the complete field list
     * @param nominated the Connection-nominated names
     * @param mutations the stage's mutations
     * @return the new list, or the first rule broken (nothing applied)
     */
    public static MutationOutcome apply(List<HttpHeader> headers, Set<String> nominated,
                                        List<HeaderMutation> mutations) {
        HeaderMutationError error = validate(nominated, mutations);
        if (error != null) {
            return new MutationOutcome.Rejected(error);
        }
        List<HttpHeader> out = new ArrayList<>(headers);
        for (HeaderMutation m : mutations) {
            String lower = m.name().toLowerCase(Locale.ROOT);
            switch (m) {
                case HeaderMutation.WriteHeader w -> {
                    boolean present = out.stream().anyMatch(h -> h.name().equalsIgnoreCase(lower));
                    switch (w.onExisting()) {
                        case OVERWRITE -> out.removeIf(h -> h.name().equalsIgnoreCase(lower));
                        case SKIP -> {
                            if (present) {
                                continue;
                            }
                        }
                        default -> { }
                    }
                    out.add(new HttpHeader(lower, w.value()));
                }
                case HeaderMutation.RemoveHeader r -> out.removeIf(h -> h.name().equalsIgnoreCase(lower));
            }
        }
        return new MutationOutcome.Applied(List.copyOf(out), !out.equals(headers));
    }

    /** {@return the first rule broken, or {@code null}} */
    static HeaderMutationError validate(Set<String> nominated, List<HeaderMutation> mutations) {
        if (mutations.size() > EnvelopeLimits.MAX_HEADER_MUTATIONS) {
            return new HeaderMutationError(HeaderMutationError.Kind.TOO_MANY, "", mutations.size());
        }
        long bytes = 0;
        for (HeaderMutation m : mutations) {
            String name = m.name();
            if (!Syntax.isToken(name)) {
                return new HeaderMutationError(HeaderMutationError.Kind.INVALID_NAME, name, 0);
            }
            String lower = name.toLowerCase(Locale.ROOT);
            if (protectedName(lower)) {
                return new HeaderMutationError(HeaderMutationError.Kind.PROTECTED, name, 0);
            }
            if (nominated.contains(lower)) {
                return new HeaderMutationError(HeaderMutationError.Kind.HOP_BY_HOP, name, 0);
            }
            if (m instanceof HeaderMutation.WriteHeader w) {
                if (integrity(lower)) {
                    return new HeaderMutationError(HeaderMutationError.Kind.PROTECTED, name, 0);
                }
                if (!HeaderRules.isSafeValue(w.value())) {
                    return new HeaderMutationError(HeaderMutationError.Kind.UNSAFE_VALUE, name, 0);
                }
                switch (w.onExisting()) {
                    case APPEND, OVERWRITE, SKIP -> { }
                    case UNSPECIFIED -> {
                        return new HeaderMutationError(HeaderMutationError.Kind.MISSING_EXISTING_ACTION, name, 0);
                    }
                    default -> {
                        return new HeaderMutationError(HeaderMutationError.Kind.INVALID_EXISTING_ACTION, "", 0);
                    }
                }
            }
            bytes += EnvelopeLimits.headerMutationBytes(m);
            if (bytes > EnvelopeLimits.MAX_HEADER_MUTATION_BYTES) {
                return new HeaderMutationError(HeaderMutationError.Kind.TOO_LARGE, "", 0);
            }
        }
        return null;
    }
}
