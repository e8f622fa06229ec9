package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.HttpHeader;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * The credential values the response to one request is scrubbed of before it reaches the sandbox (issue 22, item 2:
 * every value, in every form the proxy searches, is replaced by its placeholder in the response's status line, header
 * fields and body): the values the credential step put into the request and every other credential bound to the
 * request's host, because a stateful upstream can hand back a value it stored earlier (issue 39, item 3). Empty for
 * a request to a host no credential is bound to: its response is relayed untouched.
 *
 * <p>Holds secrets: {@link #toString()} names the credentials only, and nothing here is ever logged.
 */
public final class InjectedCredentials {
    private static final InjectedCredentials NONE = new InjectedCredentials(List.of());
    /** The content codings the proxy decodes to scrub a response body (RFC 9110 section 8.4.1). */
    public static final List<String> DECODABLE_CODINGS = List.of("gzip", "x-gzip", "deflate");

    /**
     * One injected credential.
     *
     * @param name the credential name (for the operator's finding and the metric)
     * @param value the value as sent; not empty
     * @param placeholder what replaces it in the response, e.g. {@code openshell:resolve:env:NAME}
     * @param relayUnscannable whether a response body the proxy cannot scan (a content coding other than
     *     {@link #DECODABLE_CODINGS}) may be relayed unscanned instead of being answered 502; the body is relayed
     *     only when every credential of the request allows it
     * @param sent whether the value was put into this request; {@code false} for a credential that is only bound
     *     to the request's host
     */
    public record Entry(String name, String value, String placeholder, boolean relayUnscannable, boolean sent) {
        /**
         * Checks the parts.
         *
         * @throws IllegalArgumentException if the value is empty
         * @throws NullPointerException if a part is {@code null}
         */
        public Entry {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(placeholder, "placeholder");
            if (value.isEmpty()) {
                throw new IllegalArgumentException("credential '" + name + "' has an empty value");
            }
        }

        /**
         * A credential put into the request.
         *
         * @param name the credential name
         * @param value the value as sent; not empty
         * @param placeholder what replaces it in the response
         * @param relayUnscannable whether an unscannable response body may be relayed unscanned
         */
        public Entry(String name, String value, String placeholder, boolean relayUnscannable) {
            this(name, value, placeholder, relayUnscannable, true);
        }

        /** {@return the name only: never the value} */
        @Override
        public String toString() {
            return "Entry[" + name + "]";
        }
    }

    private final List<Entry> entries;

    private InjectedCredentials(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    /** {@return no credential injected} */
    public static InjectedCredentials none() {
        return NONE;
    }

    /** {@return these injected credentials} @param entries the credentials, each once */
    public static InjectedCredentials of(List<Entry> entries) {
        return entries.isEmpty() ? NONE : new InjectedCredentials(entries);
    }

    /** {@return the injected credentials} */
    public List<Entry> entries() {
        return entries;
    }

    /** {@return whether nothing was injected} */
    public boolean isEmpty() {
        return entries.isEmpty();
    }

    /** {@return whether a value was put into the request (not only bound to its host)} */
    public boolean anySent() {
        return entries.stream().anyMatch(Entry::sent);
    }

    /** {@return whether an unscannable response body may be relayed: every credential allows it} */
    public boolean relayUnscannable() {
        return !entries.isEmpty() && entries.stream().allMatch(Entry::relayUnscannable);
    }

    /**
     * {@return the request headers narrowed so that the response can be scrubbed} Called for a request that carries
     * a credential, before any post-credentials stage signs it: {@code Accept-Encoding} keeps only the codings the
     * proxy decodes (and {@code identity}; {@code identity} alone when nothing else is left), so a conforming origin
     * never answers in a coding the proxy cannot scan (RFC 9110 section 12.5.3); {@code Range} and {@code If-Range}
     * are removed, so the origin answers the whole representation rather than a slice that could split a value
     * across responses (RFC 9110 section 14.2: a server may ignore Range).
     *
     * @param headers the request headers
     */
    public static List<HttpHeader> narrowForScrubbing(List<HttpHeader> headers) {
        List<HttpHeader> out = new ArrayList<>(headers.size());
        boolean changed = false;
        for (HttpHeader h : headers) {
            String lower = h.name().toLowerCase(Locale.ROOT);
            if (lower.equals("range") || lower.equals("if-range")) {
                changed = true;
                continue;
            }
            if (lower.equals("accept-encoding")) {
                String narrowed = acceptEncoding(h.value());
                if (!narrowed.equals(h.value())) {
                    changed = true;
                    out.add(new HttpHeader(h.name(), narrowed));
                    continue;
                }
            }
            out.add(h);
        }
        return changed ? List.copyOf(out) : headers;
    }

    private static String acceptEncoding(String value) {
        List<String> kept = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String element = part.strip();
            if (element.isEmpty()) {
                continue;
            }
            int semi = element.indexOf(';');
            String coding = (semi < 0 ? element : element.substring(0, semi)).strip().toLowerCase(Locale.ROOT);
            if (DECODABLE_CODINGS.contains(coding) || coding.equals("identity")) {
                kept.add(element);
            }
        }
        return kept.isEmpty() ? "identity" : String.join(", ", kept);
    }

    /** {@return the credential names only} */
    @Override
    public String toString() {
        return "InjectedCredentials" + entries.stream().map(Entry::name).toList();
    }
}
