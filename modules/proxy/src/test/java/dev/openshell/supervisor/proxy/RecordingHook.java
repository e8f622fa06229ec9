package dev.openshell.supervisor.proxy;

import dev.openshell.middleware.spi.Body;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;
import java.util.function.Function;

/** A {@link RequestHook} for tests: configurable answers, every call recorded. */
final class RecordingHook implements RequestHook {
    volatile Function<ProxyRequest, ChainSelection> selector = r -> ChainSelection.none();
    volatile BiFunction<ProxyRequest, Body, HookResult> evaluator = (r, b) -> new HookResult.Forward(r.headers(), b);
    final List<ProxyRequest> selected = new CopyOnWriteArrayList<>();
    final List<Body> evaluatedBodies = new CopyOnWriteArrayList<>();
    final List<Uninspectable> uninspectable = new CopyOnWriteArrayList<>();
    final List<String> limitRefusals = new CopyOnWriteArrayList<>();
    final List<ProxyRefusal> refusals = new CopyOnWriteArrayList<>();
    final List<Long> bodyBufferWaits = new CopyOnWriteArrayList<>();
    /** One line per scrubbed response: "credentials header-matches body-matches". */
    final List<String> scrubs = new CopyOnWriteArrayList<>();
    /** One line per unscannable response: "code relayed". */
    final List<String> unscannable = new CopyOnWriteArrayList<>();

    @Override
    public RequestPlan plan(ProxyRequest request) {
        selected.add(request);
        return RequestPlan.of(0, AdmissionDecision.allow(request.endpoint()), selector.apply(request));
    }

    @Override
    public HookResult evaluate(RequestPlan plan, ProxyRequest request, Body body) {
        evaluatedBodies.add(body);
        return evaluator.apply(request, body);
    }

    @Override
    public void uninspectable(RequestPlan plan, ProxyRequest request, Uninspectable what) {
        uninspectable.add(what);
    }

    @Override
    public void bodyBufferWaited(long nanos) {
        bodyBufferWaits.add(nanos);
    }

    @Override
    public void responseScrubbed(RequestPlan plan, ProxyRequest request, java.util.Set<String> credentials,
                                 long headerMatches, long bodyMatches) {
        scrubs.add(credentials + " " + headerMatches + " " + bodyMatches);
    }

    @Override
    public void responseUninspectable(RequestPlan plan, ProxyRequest request, String code, boolean relayed) {
        unscannable.add(code + " " + relayed);
    }

    @Override
    public void limitRefused(String reason) {
        limitRefusals.add(reason);
    }

    @Override
    public void refused(ProxyRefusal refusal) {
        refusals.add(refusal);
    }
}
