package dev.openshell.supervisor.proxy.internal;

import dev.openshell.middleware.spi.HeaderTable;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.EnvelopeLimits;
import java.io.EOFException;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Reads requests off one client stream and checks what can be checked before admission: strict head parsing
 * ({@link HeadParser}), the request-target (absolute-form on the proxy port, RFC 9112 section 3.2.2; origin-form, or
 * absolute-form naming the same destination, inside a tunnel), exactly one {@code Host} agreeing with the target
 * (section 3.2), the body framing ({@link BodyFraming}), the {@code Connection} options (RFC 9110 section 7.6.1) and
 * the expectation (section 10.1.1). Reads buffered bodies too, within the chain's cap. The home of request read
 * limits and timeouts.
 */
final class RequestReader {
    private final HttpInput in;
    private final Tunnel tunnel;

    /**
     * The request-target.
     *
     * @param scheme {@code http} or {@code https}
     * @param authority the normalised destination
     * @param path the path, {@code *} for an asterisk-form OPTIONS
     * @param query the raw query without {@code ?}, {@code null} when absent
     * @param originForm path and query as forwarded upstream
     */
    record Target(String scheme, Authority authority, String path, String query, String originForm) {
        /** {@return the query, empty when absent} */
        String queryOrEmpty() {
            return query == null ? "" : query;
        }
    }

    RequestReader(HttpInput in, Tunnel tunnel) {
        this.in = in;
        this.tunnel = tunnel;
    }

    /** {@return the next request head, or {@code null} at a clean end of stream} */
    RequestHead readHead() throws IOException, FramingException {
        try {
            return HeadParser.readRequestHead(in);
        } catch (EOFException e) {
            return null;
        }
    }

    /** Checks a non-CONNECT request head. */
    ParsedRequest parse(RequestHead head) throws FramingException, Refusal {
        Target t = target(head);
        rejectUnderscoreShadows(head);
        checkHost(head, t.authority(), defaultPort(t.scheme()));
        if (head.isHttp10() && head.all("host").isEmpty()) {
            // forwarded as HTTP/1.1, which requires Host (RFC 9112 section 3.2): the target's authority supplies it
            head = head.withField(HeaderField.of("Host", t.authority().hostHeader(defaultPort(t.scheme()))));
        }
        BodyFraming framing = BodyFraming.forRequest(head);
        Set<String> nominated = nominated(head);
        boolean expectContinue = expectContinue(head);
        boolean clientClose = head.isHttp10() || head.listElements("connection").contains("close");
        // RFC 9110 section 7.8: an Upgrade in an HTTP/1.0 request is ignored (and dropped as hop-by-hop)
        boolean websocket = !head.isHttp10() && head.method().equals("GET") && nominated.contains("upgrade")
                && head.listElements("upgrade").equals(List.of("websocket"));
        return new ParsedRequest(head, t, framing, nominated, expectContinue, clientClose, websocket);
    }

    /** {@return the CONNECT authority, checked: not inside a tunnel, Host agreeing, no content} */
    Authority connectAuthority(RequestHead head) throws FramingException {
        if (tunnel != null) {
            throw FramingException.badRequest("connect_in_tunnel", "CONNECT inside a CONNECT tunnel is not supported");
        }
        Authority a = Authority.parse(head.target(), -1);
        checkHost(head, a, a.port());
        if (BodyFraming.forRequest(head).hasBody()) {
            throw FramingException.badRequest("connect_with_body", "a CONNECT request carries no content");
        }
        return a;
    }

    /**
     * Reads a whole body to buffer it for the chain.
     *
     * @param framing the request's framing
     * @param cap the most bytes a chunked body may decode to
     * @return the body, or {@code null} when a chunked body crossed {@code cap}
     */
    Body readBody(BodyFraming framing, int cap) throws IOException, FramingException {
        return switch (framing.kind()) {
            case NONE, UNTIL_CLOSE -> Body.empty();
            // one array up to 1 MiB, segmented (Body.SEGMENT_BYTES) beyond: no buffered body is a humongous object
            case LENGTH -> Body.read(in, (int) framing.length());
            case CHUNKED -> {
                Body.Sink sink = Body.sink();
                long n = new ChunkedDecoder(in).decodeTo(sink, Math.min(cap, EnvelopeLimits.MAX_BODY_BYTES));
                yield n < 0 ? null : sink.toBody();
            }
        };
    }

    private Target target(RequestHead head) throws FramingException {
        String raw = head.target();
        if (raw.indexOf('#') >= 0) {
            throw FramingException.badRequest("invalid_request_target",
                    "the request-target carries a fragment (RFC 9112 section 3.2)");
        }
        boolean options = head.method().equals("OPTIONS");
        if (tunnel != null) {
            Authority a = tunnel.admitted().authority();
            if (raw.startsWith("/")) {
                return build(tunnel.scheme(), a, raw, options);
            }
            if (raw.equals("*") && options) {
                return new Target(tunnel.scheme(), a, "*", null, "*");
            }
            Target abs = absolute(raw, options);
            if (!abs.scheme().equals(tunnel.scheme()) || !abs.authority().host().equals(a.host())
                    || abs.authority().port() != a.port()) {
                throw FramingException.badRequest("target_outside_tunnel",
                        "the request-target names another destination than the CONNECT authority");
            }
            return abs;
        }
        if (raw.startsWith("/") || raw.equals("*")) {
            throw FramingException.badRequest("absolute_form_required",
                    "a request to a proxy must use absolute-form (RFC 9112 section 3.2.2)");
        }
        return absolute(raw, options);
    }

    private Target absolute(String raw, boolean options) throws FramingException {
        int schemeEnd = raw.indexOf("://");
        if (schemeEnd <= 0) {
            throw FramingException.badRequest("absolute_form_required",
                    "a request to a proxy must use absolute-form (RFC 9112 section 3.2.2)");
        }
        String scheme = raw.substring(0, schemeEnd).toLowerCase(Locale.ROOT);
        if (tunnel == null && scheme.equals("https")) {
            throw FramingException.badRequest("https_needs_connect",
                    "send https requests through CONNECT (RFC 9110 section 9.3.6)");
        }
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw FramingException.badRequest("unsupported_scheme", "only http and https are proxied");
        }
        String rest = raw.substring(schemeEnd + 3);
        int end = rest.length();
        for (int i = 0; i < rest.length(); i++) {
            char ch = rest.charAt(i);
            if (ch == '/' || ch == '?') {
                end = i;
                break;
            }
        }
        Authority a = Authority.parse(rest.substring(0, end), defaultPort(scheme));
        return build(scheme, a, rest.substring(end), options);
    }

    private static Target build(String scheme, Authority a, String pathAndQuery, boolean options) {
        if (pathAndQuery.isEmpty()) {
            return options ? new Target(scheme, a, "*", null, "*") : new Target(scheme, a, "/", null, "/");
        }
        int q = pathAndQuery.indexOf('?');
        String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
        String query = q < 0 ? null : pathAndQuery.substring(q + 1);
        if (path.isEmpty()) {
            path = "/";
        }
        return new Target(scheme, a, path, query, query == null ? path : path + "?" + query);
    }

    private static int defaultPort(String scheme) {
        return scheme.equals("https") ? 443 : 80;
    }

    /** See {@link HeaderTable#underscoreShadowsProtected}: such a name is refused, whatever its value. */
    private static void rejectUnderscoreShadows(RequestHead head) throws FramingException {
        for (HeaderField f : head.fields()) {
            if (HeaderTable.underscoreShadowsProtected(f.lowerName())) {
                throw FramingException.badRequest("underscore_shadows_protected_field",
                        "a field name with '_' reads as a framing, routing, credential or hop-by-hop field, or as"
                                + " x-openshell-middleware-*, where '_' is taken for '-'");
            }
        }
    }

    /** RFC 9112 section 3.2: exactly one Host in HTTP/1.1; here it must also name the request-target's authority. */
    private static void checkHost(RequestHead head, Authority target, int defaultPort) throws FramingException {
        List<HeaderField> hosts = head.all("host");
        if (hosts.size() > 1) {
            throw FramingException.badRequest("multiple_host", "more than one Host field (RFC 9112 section 3.2)");
        }
        if (hosts.isEmpty()) {
            if (head.isHttp10()) {
                return;
            }
            throw FramingException.badRequest("missing_host", "an HTTP/1.1 request without Host (RFC 9112 section 3.2)");
        }
        Authority h;
        try {
            h = Authority.parse(hosts.get(0).value(), defaultPort);
        } catch (FramingException e) {
            throw FramingException.badRequest("invalid_host", "the Host field is not a valid authority");
        }
        if (!h.host().equals(target.host()) || h.port() != target.port()) {
            throw FramingException.badRequest("host_mismatch",
                    "the Host field does not match the request-target authority");
        }
    }

    private static Set<String> nominated(RequestHead head) throws FramingException {
        Set<String> names = new LinkedHashSet<>();
        for (String e : head.listElements("connection")) {
            if (!HeadParser.isToken(e)) {
                throw FramingException.badRequest("invalid_connection",
                        "a Connection option is not a token (RFC 9110 section 7.6.1)");
            }
            if (HeaderTable.routingOrFraming(e)) {
                throw FramingException.badRequest("connection_nominates_protected",
                        "Connection nominates a routing or framing field");
            }
            names.add(e);
        }
        return names;
    }

    private static boolean expectContinue(RequestHead head) throws Refusal {
        List<String> ex = head.listElements("expect");
        if (ex.isEmpty() || head.isHttp10()) {
            return false;
        }
        if (ex.equals(List.of("100-continue"))) {
            return true;
        }
        throw new Refusal(417, "expectation_failed", "only the 100-continue expectation is supported");
    }
}
