package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * {@link PolicySteps} for tests: configurable answers, every call and record kept. The fields are read once per
 * exchange ({@link #steps()}), so a test may change them between requests.
 */
final class RecordingSteps {
    volatile PolicySteps.Admit admission;
    volatile Function<ProxyRequest, ChainSelection> selector = r -> ChainSelection.none();
    /** The L7 step: unruled unless a test sets a decision. */
    volatile PolicySteps.L7<Void> l7 = (plan, request, body) -> new L7Verdict.Unruled();
    /** The response stages' selection of each request's host. */
    volatile Function<ProxyRequest, ChainSelection> responseSelector = r -> ChainSelection.none();
    volatile BiFunction<ProxyRequest, Body, RequestVerdict> evaluator = (r, b) -> new RequestVerdict.Forward(
            r.headers(), b);
    volatile PolicySteps.Credentials<Void> credentials = (p, r, out) -> new CredentialVerdict.Forward(out.headers(),
            out.rawQuery());
    volatile long generation;
    /** The WebSocket message chain step: no stage joins a session unless a test sets one. */
    volatile PolicySteps.Sessions<Void> sessions = (p, r) -> new SessionVerdict.None();
    /** The response step; {@code null} answers mean no response stage. */
    volatile PolicySteps.ResponseChain<Void> responses = (p, r, response) -> null;
    /** Every response head the response step saw. */
    final List<ProxyResponse> responded = new CopyOnWriteArrayList<>();
    final List<ProxyRequest> selected = new CopyOnWriteArrayList<>();
    final List<Body> evaluatedBodies = new CopyOnWriteArrayList<>();
    final List<Uninspectable> uninspectable = new CopyOnWriteArrayList<>();
    final List<String> limitRefusals = new CopyOnWriteArrayList<>();
    final List<ProxyRefusal> refusals = new CopyOnWriteArrayList<>();
    final List<Long> bodyBufferWaits = new CopyOnWriteArrayList<>();
    /** One line per scrubbed response: "credentials header-matches body-matches". */
    final List<String> scrubs = new CopyOnWriteArrayList<>();
    /** The status of the first withheld interim head, once per exchange that withheld any. */
    final List<Integer> interimWithheld = new CopyOnWriteArrayList<>();
    /** One line per unscannable response: "code relayed". */
    final List<String> unscannable = new CopyOnWriteArrayList<>();
    /** One entry per response head with fields dropped as unreadable: their names. */
    final List<List<String>> unreadableFields = new CopyOnWriteArrayList<>();

    RecordingSteps(PolicySteps.Admit admission) {
        this.admission = admission;
    }

    /**
     * Selects no chain and forwards every request as it is (the defaults), and forgets the requests selected and the
     * bodies evaluated so far.
     */
    void forwardUnchained() {
        selector = r -> ChainSelection.none();
        evaluator = (r, b) -> new RequestVerdict.Forward(r.headers(), b);
        selected.clear();
        evaluatedBodies.clear();
    }

    /**
     * Forwards every body as it is, but holds each body of {@code size} bytes in the step until {@code release} (at
     * most 60 s), counting down {@code held} when one arrives.
     *
     * @param size the length of the bodies to hold
     * @param held counted down when such a body reaches the step
     * @param release opened by the test to let them go on
     */
    void holdBodiesOf(long size, CountDownLatch held, CountDownLatch release) {
        evaluator = (r, body) -> {
            if (body.size() == size) {
                held.countDown();
                try {
                    assertTrue(release.await(60, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            return new RequestVerdict.Forward(r.headers(), body);
        };
    }

    /** {@return the steps as the fields are now} */
    PolicySteps<Void> steps() {
        PolicySteps.Admit admit = admission;
        Function<ProxyRequest, ChainSelection> select = selector;
        Function<ProxyRequest, ChainSelection> selectResponses = responseSelector;
        BiFunction<ProxyRequest, Body, RequestVerdict> evaluate = evaluator;
        PolicySteps.ResponseChain<Void> respond = responses;
        PolicySteps.Sessions<Void> open = sessions;
        return new PolicySteps<>(generation, admit,
                request -> {
                    selected.add(request);
                    return new Planned<>(null, select.apply(request), selectResponses.apply(request));
                },
                l7,
                (plan, request, body) -> {
                    evaluatedBodies.add(body);
                    return evaluate.apply(request, body);
                },
                credentials,
                (Optional<Void> plan, ExchangeRecord record) -> {
                    switch (record) {
                        case ExchangeRecord.Refused r -> {
                            if (r.refusal().kind() == ProxyRefusal.Kind.LIMIT) {
                                limitRefusals.add(r.refusal().code());
                            }
                            refusals.add(r.refusal());
                        }
                        case ExchangeRecord.BodyBufferWaited w -> bodyBufferWaits.add(w.nanos());
                        case ExchangeRecord.Uninspected u -> uninspectable.add(u.what());
                        case ExchangeRecord.ResponseScrubbed s -> scrubs.add(s.credentials() + " "
                                + s.headerMatches() + " " + s.bodyMatches());
                        case ExchangeRecord.ResponseUninspectable u -> unscannable.add(u.code() + " " + u.relayed());
                        case ExchangeRecord.InterimWithheld w -> interimWithheld.add(w.status());
                        case ExchangeRecord.ResponseFieldsUnreadable u -> unreadableFields.add(u.fields());
                        default -> {
                        }
                    }
                },
                open,
                new PolicySteps.ResponseChain<>() {
                    @Override
                    public ResponseVerdict open(Void plan, ProxyRequest request, ProxyResponse response) {
                        responded.add(response);
                        return respond.open(plan, request, response);
                    }

                    @Override
                    public boolean withholdsInterim(Void plan, ProxyRequest request) {
                        return respond.withholdsInterim(plan, request);
                    }
                });
    }
}
