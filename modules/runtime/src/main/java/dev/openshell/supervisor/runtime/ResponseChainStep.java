package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.supervisor.engine.chain.ResponseChainRun;
import dev.openshell.supervisor.proxy.Answer;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRequest;
import dev.openshell.supervisor.proxy.ProxyResponse;
import dev.openshell.supervisor.proxy.ResponseBody;
import dev.openshell.supervisor.proxy.ResponseVerdict;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The response stages of an exchange ({@link PolicySteps.ResponseChain}; RFC 0009 {@code HTTP_RESPONSE/PRE_RETURN},
 * NVIDIA/OpenShell {@code HttpResponsePreReturn}): the stages the plan selected for the host, run by a
 * {@link ResponseChainRun} on the scrubbed final response. Every stage invocation becomes an OCSF HTTP Activity event
 * and a metric, as for request stages; failures and bypasses become Detection Findings.
 *
 * <p>Answers: a block is {@code 502 response_blocked} and a {@code fail_closed} failure before the head is committed
 * {@code 502 response_middleware_failed}, both naming the config and binding and saying that the upstream request may
 * have completed.
 *
 * @param audit where records go
 * @param accumulationDeadline how long a whole-body stage waits for the complete body
 */
record ResponseChainStep(ExchangeAudit audit, Duration accumulationDeadline)
        implements PolicySteps.ResponseChain<ExchangePlan> {
    /** The platform's whole-body accumulation deadline. */
    static final Duration DEFAULT_ACCUMULATION_DEADLINE = Duration.ofSeconds(10);

    @Override
    public ResponseVerdict open(ExchangePlan p, ProxyRequest request, ProxyResponse response) {
        if (p.responses().isEmpty()) {
            return null;
        }
        ResponseChainRun run = new ResponseChainRun(p.responses().stages(),
                new RequestContext(request.requestId(), "", "", "", p.process()), p.target(request.target()));
        ResponseChainRun.Opened o = run.open(response.status(), response.headers(), response.nominated(),
                response::permittedBodyModes);
        return switch (o) {
            case ResponseChainRun.Opened.Blocked b -> {
                audit.stages(request.client(), p.facts(), run.records(), response.status());
                yield new ResponseVerdict.Withhold(answer("response_blocked", "a middleware stage blocked the "
                        + "upstream's response; the upstream request may have completed", b.configKey(),
                        b.bindingId(), b.reasonCode()));
            }
            case ResponseChainRun.Opened.FailedClosed f -> {
                audit.stages(request.client(), p.facts(), run.records(), response.status());
                yield new ResponseVerdict.Withhold(failed(p, f.configKey(), f.failure().code()));
            }
            case ResponseChainRun.Opened.Proceed go -> {
                if (!go.inspectsBody()) {
                    audit.stages(request.client(), p.facts(), run.records(), response.status());
                    yield new ResponseVerdict.Deliver(go.headers(), Optional.empty());
                }
                yield new ResponseVerdict.Deliver(go.headers(), Optional.of(new Stages(p, request, run,
                        response.status())));
            }
        };
    }

    /**
     * Interim heads are withheld when a selected response stage is {@code fail_closed}: the contract never
     * evaluates them, so the stage could not have inspected them.
     */
    @Override
    public boolean withholdsInterim(ExchangePlan p, ProxyRequest request) {
        return p.responses().stages().stream()
                .anyMatch(s -> s.onError() == dev.openshell.middleware.spi.internal.OnError.FAIL_CLOSED);
    }

    /** The body stages of one response, as the proxy drives them. */
    private final class Stages implements ResponseBody {
        private final ExchangePlan p;
        private final ProxyRequest request;
        private final ResponseChainRun run;
        private final int status;
        private boolean ended;

        Stages(ExchangePlan p, ProxyRequest request, ResponseChainRun run, int status) {
            this.p = p;
            this.request = request;
            this.run = run;
            this.status = status;
        }

        @Override
        public boolean holdsHead() {
            return run.holdsHead();
        }

        @Override
        public Duration accumulationDeadline() {
            return accumulationDeadline;
        }

        @Override
        public List<Body> unit(Body data, boolean endOfStream) throws Failure {
            try {
                return run.unit(data, endOfStream);
            } catch (ResponseChainRun.Failed f) {
                throw new Failure(failed(p, "", f.failure().code()));
            }
        }

        @Override
        public List<Body> accumulationTimedOut() throws Failure {
            try {
                return run.accumulationTimedOut();
            } catch (ResponseChainRun.Failed f) {
                throw new Failure(failed(p, "", f.failure().code()));
            }
        }

        @Override
        public void end(boolean complete) {
            if (ended) {
                return;
            }
            ended = true;
            run.end(complete ? SessionEndReason.NORMAL : SessionEndReason.CANCELLATION);
            audit.stages(request.client(), p.facts(), run.records(), status);
        }
    }

    private static Answer failed(ExchangePlan p, String configKey, String code) {
        return answer("response_middleware_failed", "a fail_closed response middleware failed; the upstream "
                + "request may have completed", configKey, "", code);
    }

    private static Answer answer(String error, String detail, String configKey, String bindingId, String code) {
        Map<String, String> extra = new LinkedHashMap<>();
        if (!configKey.isEmpty()) {
            extra.put("config_key", configKey);
        }
        if (!bindingId.isEmpty()) {
            extra.put("binding_id", bindingId);
        }
        extra.put("reason_code", code);
        return new Answer(502, error, detail, extra, true);
    }
}
