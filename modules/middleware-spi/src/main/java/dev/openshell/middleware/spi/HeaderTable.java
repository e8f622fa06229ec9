package dev.openshell.middleware.spi;

import static org.apiguardian.api.API.Status.EXPERIMENTAL;
import static org.apiguardian.api.API.Status.MAINTAINED;

import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.apiguardian.api.API;

/**
 * The one classification of protected and hop-by-hop header fields, with a column per use. Every rule that asks
 * "is this field special?" reads this table: the chain engine's input filter and mutation rules, the post-credentials
 * checks, the proxy's forwarding and response relay, and the SigV4 signer's unsigned set.
 *
 * <table>
 *   <caption>The rows; names compared after ASCII lowercasing, {@code *} a prefix</caption>
 *   <tr><th>field</th><th>kind</th><th>hidden from middleware</th><th>protected from mutation</th>
 *       <th>hop-by-hop on forwarding</th></tr>
 *   <tr><td>authorization, cookie, x-amz-*, x-openshell-credential*</td><td>credential</td><td>yes</td><td>yes</td>
 *       <td>no</td></tr>
 *   <tr><td>proxy-authorization, proxy-authenticate</td><td>credential</td><td>yes</td><td>yes</td><td>yes</td></tr>
 *   <tr><td>host</td><td>routing</td><td>yes</td><td>yes</td><td>no</td></tr>
 *   <tr><td>content-length, transfer-encoding</td><td>framing</td><td>yes</td><td>yes</td>
 *       <td>no (the proxy rewrites framing itself)</td></tr>
 *   <tr><td>connection, proxy-connection, keep-alive, te, trailer, upgrade</td><td>hop-by-hop</td><td>yes</td>
 *       <td>yes</td><td>yes</td></tr>
 *   <tr><td>expect</td><td>expectation</td><td>no</td><td>no</td><td>yes (the proxy answers 100-continue)</td></tr>
 * </table>
 *
 * <ul>
 *   <li><b>Hidden from middleware</b> (RFC 0009, "The middleware contract": "OpenShell omits credential-bearing,
 *       routing, framing, hop-by-hop, and Connection-nominated headers"): a stage never sees these lines.</li>
 *   <li><b>Protected from mutation</b>: a stage may not write or remove them.</li>
 *   <li><b>Hop-by-hop on forwarding</b> (RFC 9110 section 7.6.1; Proxy-Authorization and Proxy-Authenticate are
 *       consumed by the proxy, sections 11.7.1 and 11.7.2; Expect, section 10.1.1, is answered by the proxy): the
 *       proxy drops them from requests and responses it forwards, as it drops every Connection-nominated field.</li>
 * </ul>
 * Connection-nominated names are per message and not in the table; a {@code Connection} field may not nominate a
 * {@linkplain #routingOrFraming routing or framing} field. {@code set-cookie}, {@code x-api-key} and {@code api-key}
 * are deliberately not in it.
 */
@API(status = MAINTAINED, since = "0.1")
public final class HeaderTable {
    /** Why a field is in the table. An open enum: keep a {@code default} branch when you {@code switch} over it. */
    @API(status = MAINTAINED, since = "0.1")
    public enum Kind {
        /** Carries a credential: {@code authorization}, {@code cookie}, {@code x-amz-*} and the like. */
        CREDENTIAL,
        /** Decides where the request goes: {@code host}. */
        ROUTING,
        /** Decides where the message ends: {@code content-length}, {@code transfer-encoding}. */
        FRAMING,
        /** Hop-by-hop by RFC 9110 section 7.6.1. */
        HOP_BY_HOP,
        /** An expectation the proxy answers itself: {@code expect}. */
        EXPECTATION
    }

    /**
     * One row.
     *
     * @param name the lowercase field name, or a prefix when {@code prefix}
     * @param prefix whether {@code name} matches every field that starts with it
     * @param kind why the field is listed
     * @param hiddenFromMiddleware whether stages never see it
     * @param protectedFromMutation whether stages may not write or remove it
     * @param hopByHop whether the proxy drops it when forwarding
     */
    @API(status = MAINTAINED, since = "0.1")
    public record Row(String name, boolean prefix, Kind kind, boolean hiddenFromMiddleware,
                      boolean protectedFromMutation, boolean hopByHop) {
        /** @throws NullPointerException if {@code name} or {@code kind} is {@code null} */
        @API(status = MAINTAINED, since = "0.1")
        public Row {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(kind, "kind");
        }

        boolean matches(String lower) {
            return prefix ? lower.startsWith(name) : lower.equals(name);
        }
    }

    /** Every row, exact names first. */
    public static final List<Row> ROWS = List.of(
            row("authorization", Kind.CREDENTIAL, false),
            row("proxy-authorization", Kind.CREDENTIAL, true),
            row("proxy-authenticate", Kind.CREDENTIAL, true),
            row("cookie", Kind.CREDENTIAL, false),
            row("host", Kind.ROUTING, false),
            row("content-length", Kind.FRAMING, false),
            row("transfer-encoding", Kind.FRAMING, false),
            row("connection", Kind.HOP_BY_HOP, true),
            row("proxy-connection", Kind.HOP_BY_HOP, true),
            row("keep-alive", Kind.HOP_BY_HOP, true),
            row("te", Kind.HOP_BY_HOP, true),
            row("trailer", Kind.HOP_BY_HOP, true),
            row("upgrade", Kind.HOP_BY_HOP, true),
            new Row("expect", false, Kind.EXPECTATION, false, false, true),
            new Row("x-amz-", true, Kind.CREDENTIAL, true, true, false),
            new Row("x-openshell-credential", true, Kind.CREDENTIAL, true, true, false));

    /** The exact-name rows by name: one hash probe per lookup instead of a comparison per row. */
    private static final java.util.Map<String, Row> EXACT = ROWS.stream().filter(r -> !r.prefix())
            .collect(java.util.stream.Collectors.toUnmodifiableMap(Row::name, r -> r));
    /** The prefix rows, in table order (exact names take precedence, as in {@link #ROWS}). */
    private static final Row[] PREFIXED = ROWS.stream().filter(Row::prefix).toArray(Row[]::new);

    private HeaderTable() {
    }

    private static Row row(String name, Kind kind, boolean hopByHop) {
        return new Row(name, false, kind, true, true, hopByHop);
    }

    /**
     * {@return the row of a field name, if it has one}
     *
     * @param lower the field name, ASCII-lowercased
     */
    @API(status = MAINTAINED, since = "0.1")
    public static Optional<Row> row(String lower) {
        return Optional.ofNullable(find(lower));
    }

    /** {@return whether stages never see the field} @param lower the field name, ASCII-lowercased */
    @API(status = MAINTAINED, since = "0.1")
    public static boolean hiddenFromMiddleware(String lower) {
        Row r = find(lower);
        return r != null && r.hiddenFromMiddleware();
    }

    /** {@return whether stages may not write or remove the field} @param lower the field name, ASCII-lowercased */
    @API(status = MAINTAINED, since = "0.1")
    public static boolean protectedFromMutation(String lower) {
        Row r = find(lower);
        return r != null && r.protectedFromMutation();
    }

    /** {@return whether the proxy drops the field when forwarding} @param lower the field name, ASCII-lowercased */
    @API(status = MAINTAINED, since = "0.1")
    public static boolean hopByHop(String lower) {
        Row r = find(lower);
        return r != null && r.hopByHop();
    }

    /** {@return whether the field frames the message} @param lower the field name, ASCII-lowercased */
    @API(status = MAINTAINED, since = "0.1")
    public static boolean framing(String lower) {
        Row r = find(lower);
        return r != null && r.kind() == Kind.FRAMING;
    }

    /**
     * {@return whether the field routes or frames the message, which a {@code Connection} field may never nominate}
     *
     * @param lower the field name, ASCII-lowercased
     */
    @API(status = MAINTAINED, since = "0.1")
    public static boolean routingOrFraming(String lower) {
        Row r = find(lower);
        return r != null && (r.kind() == Kind.ROUTING || r.kind() == Kind.FRAMING);
    }

    /** A response's coding and range fields: stages read them but may not change them. */
    private static final java.util.Set<String> RESPONSE_CODING_AND_RANGE = java.util.Set.of("content-encoding",
            "content-range", "accept-ranges");
    /** A response's integrity fields: a transformed body invalidates them. */
    private static final java.util.Set<String> RESPONSE_INTEGRITY = java.util.Set.of("content-md5", "digest",
            "content-digest", "repr-digest", "etag");

    /**
     * {@return whether a response stage may read a response field but neither write nor remove it} The framing fields
     * ({@code content-length}, {@code transfer-encoding}), the coding ({@code content-encoding}) and the range
     * ({@code content-range}, {@code accept-ranges}): the supervisor frames, decodes and delivers the body by them
     * (OpenShell {@code proto/supervisor_middleware.proto}, {@code HttpResponsePreflightInspect.header_mutations}).
     *
     * @param lower the field name, ASCII-lowercased
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static boolean responseReadOnly(String lower) {
        return framing(lower) || RESPONSE_CODING_AND_RANGE.contains(lower);
    }

    /**
     * {@return whether a response stage may remove a response field but not write it} The integrity fields
     * ({@code content-md5}, {@code digest}, {@code content-digest}, {@code repr-digest}, {@code etag}): a
     * transformed body invalidates them.
     *
     * @param lower the field name, ASCII-lowercased
     */
    @API(status = EXPERIMENTAL, since = "0.2")
    public static boolean responseIntegrity(String lower) {
        return RESPONSE_INTEGRITY.contains(lower);
    }

    /** Field names in this namespace are written only by middleware stages; the sandbox's own are stripped. */
    public static final String MIDDLEWARE_PREFIX = "x-openshell-middleware-";

    /**
     * {@return whether a field name with {@code _} in it becomes a row of this table, or a name in the
     * {@link #MIDDLEWARE_PREFIX middleware namespace}, when {@code _} is read as {@code -}}
     *
     * <p>CGI-style servers (PHP, WSGI, many gateways) map both {@code Transfer-Encoding} and {@code Transfer_Encoding}
     * to {@code HTTP_TRANSFER_ENCODING}, so such a name would frame, route or authenticate the message for them while
     * every rule here reads it as an ordinary field (Envoy's {@code headers_with_underscores_action} exists for the
     * same reason). The proxy refuses such a request and drops such a field from responses.
     *
     * @param lower the field name, ASCII-lowercased
     */
    @API(status = MAINTAINED, since = "0.1")
    public static boolean underscoreShadowsProtected(String lower) {
        if (lower.indexOf('_') < 0) {
            return false;
        }
        String dashed = lower.replace('_', '-');
        return find(dashed) != null || dashed.startsWith(MIDDLEWARE_PREFIX);
    }

    private static Row find(String lower) {
        // runs for every field line of every request (several times): a hash probe, then the two prefixes
        Row r = EXACT.get(lower);
        if (r != null) {
            return r;
        }
        for (Row p : PREFIXED) {
            if (p.matches(lower)) {
                return p;
            }
        }
        return null;
    }
}
