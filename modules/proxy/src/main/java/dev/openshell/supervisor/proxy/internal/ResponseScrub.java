package dev.openshell.supervisor.proxy.internal;

import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * What the response to one request must be scrubbed of (the credentials it carried and those bound to its host), and
 * where its records go.
 *
 * @param request the request
 * @param injected the credential values to scrub; not empty
 * @param audit the exchange's audit ({@link Pipeline#audit})
 */
record ResponseScrub(ProxyRequest request, InjectedCredentials injected, Consumer<ExchangeRecord> audit) {
    /**
     * How long, in milliseconds, the upstream of a scrubbed stream (body, events, WebSocket messages) may be silent
     * before the text held back goes to the client ({@link SecretScrubber.Scrubbing#finish}, {@link EventSplits#release},
     * {@link ScrubbedMessages#drain}): a constant, so that when text arrives tells nothing about a secret (attacker
     * pass finding 12). A value split across reads further apart is not joined.
     */
    static final int SILENCE_MILLIS = 200;

    /** What follows the release of a scrub's held text ({@link #silence}). */
    @FunctionalInterface
    interface Released {
        /** Passes the released text on. */
        void run() throws IOException;
    }

    /**
     * {@return the release of a scrubbed body's held text after {@link #SILENCE_MILLIS} ms without upstream bytes}, for
     * the upstream's {@link HttpInput}: the scrubber's tail, then the held events, then {@code then}. What is held and
     * when it goes depend on lengths and time only (attacker pass finding 12).
     *
     * @param c the upstream connection, whose read timeout the wait sets
     * @param scrubbing the body's scrub
     * @param events the event splitter after the scrub, or {@code null}
     * @param alsoHolding whether what comes after them holds text too
     * @param paused whether no wait is set now although text is held (a stage timing the reads itself)
     * @param then what passes the released text on
     */
    static HttpInput.Silence silence(UpstreamPool.Connection c, SecretScrubber.Scrubbing scrubbing, EventSplits events,
                                     BooleanSupplier alsoHolding, BooleanSupplier paused, Released then) {
        return new HttpInput.Silence() {
            @Override
            public int holdMillis() {
                boolean holding = scrubbing.holding() || events != null && !events.held.isEmpty()
                        || alsoHolding.getAsBoolean();
                return holding && !paused.getAsBoolean() ? SILENCE_MILLIS : 0;
            }

            @Override
            public void waitAtMost(int millis) throws IOException {
                c.readTimeout(millis);
            }

            @Override
            public void silent() throws IOException {
                scrubbing.finish();
                if (events != null) {
                    events.release();
                }
                then.run();
            }
        };
    }

    /** {@return a new scrubber for one response} */
    SecretScrubber newScrubber() {
        List<SecretScrubber.Secret> secrets = injected.entries().stream()
                .map(e -> new SecretScrubber.Secret(e.name(), e.value(), e.placeholder())).toList();
        return new SecretScrubber(SecretScrubber.compiled(secrets));
    }

    /** Records a response scrubbed of injected values. */
    void scrubbed(Set<String> credentials, long headerMatches, long bodyMatches) {
        audit.accept(new ExchangeRecord.ResponseScrubbed(request, credentials, headerMatches, bodyMatches));
    }

    /**
     * Records the fields of one response head dropped because a parameter or RFC 2047 word of their value is in a
     * charset this runtime cannot decode ({@link HeadScrub#unreadable}): one record per head, naming the fields.
     *
     * @param fields the lowercase field names, not empty; never their values
     */
    void unreadableFields(List<String> fields) {
        audit.accept(new ExchangeRecord.ResponseFieldsUnreadable(request, fields));
    }

    /** Records a response whose body could not be scanned. */
    void uninspectable(String code, boolean relayed) {
        audit.accept(new ExchangeRecord.ResponseUninspectable(request, code, relayed));
    }

    /** {@return the request and credential names only} */
    @Override
    public String toString() {
        return "ResponseScrub[" + request.requestId() + ", " + injected + "]";
    }
}
