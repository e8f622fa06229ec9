package dev.openshell.supervisor.runtime;

import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.supervisor.audit.RefusalFacts;
import dev.openshell.supervisor.engine.chain.ChainEngine;
import dev.openshell.supervisor.engine.chain.ChainOutcome;
import dev.openshell.supervisor.engine.chain.ChainResult;
import dev.openshell.supervisor.engine.chain.DenyResponse;
import dev.openshell.supervisor.engine.chain.HeaderRules;
import dev.openshell.supervisor.engine.credentials.CredentialInjector;
import dev.openshell.supervisor.proxy.Answer;
import dev.openshell.supervisor.proxy.CredentialVerdict;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.PolicySteps;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Credential injection by one generation ({@link PolicySteps.Credentials}; RFC 0009: "Credential injection", after
 * the chain and route selection, then the restricted post-credentials built-ins, then forwarding): placeholders
 * replaced in header values and the query for the credentials bound to the destination, then the post-credentials
 * stages (request signing) with the serving generation's credentials. The response scrub is decided here: every value
 * sent, a signer's key ID included, and every other credential bound to the admitted host (a stateful upstream can
 * hand back a value stored by an earlier request; issue 39, item 3). A request whose response is scrubbed is narrowed
 * for it before it is signed ({@link InjectedCredentials#narrowForScrubbing}). A refusal is audited here, with the
 * operator's detail the client does not get.
 *
 * @param generation the generation
 * @param engine the chain engine (post-credentials stages)
 * @param audit where records go
 */
record CredentialStep(Generation generation, ChainEngine engine, ExchangeAudit audit)
        implements PolicySteps.Credentials<ExchangePlan> {
    @Override
    public CredentialVerdict inject(ExchangePlan p, ProxyRequest request, PolicySteps.Outgoing out) {
        List<HttpHeader> base = out.fromChain() ? out.headers()
                : HeaderRules.stripMiddlewareNamespace(out.headers()).headers();
        HttpRequestTarget target = request.target();
        CredentialInjector.Result r = generation.credentials().inject(
                new CredentialInjector.Destination(target.scheme(), p.host(), target.port()), base,
                request.connectionNominated(), out.rawQuery());
        if (r instanceof CredentialInjector.Result.Refused refused) {
            audit.metrics().failure(refused.code());
            // the operator's event names the credential and where it was; the client's answer names neither
            audit.refused(request.client(), new RefusalFacts("credential", refused.code(), Optional.empty(), 403,
                    refused.detail(), ExchangeAudit.clientIp(request.client()), Optional.of(p.facts())));
            return new CredentialVerdict.Refuse(new Answer(403, refused.code(), refused.message()));
        }
        CredentialInjector.Result.Injected injected = (CredentialInjector.Result.Injected) r;
        Set<String> used = new TreeSet<>(injected.used());
        Set<String> bound = generation.credentials().boundTo(p.host());
        // a response is scrubbed of every value sent or bound to the host: narrow the request first, so that it is
        // signed as sent; response stages read the decoded body: the same narrowing keeps the response in a coding
        // they can read
        List<HttpHeader> sent = used.isEmpty() && bound.isEmpty() && p.post().isEmpty() && p.responses().isEmpty()
                ? injected.headers()
                : InjectedCredentials.narrowForScrubbing(injected.headers());
        if (p.post().isEmpty()) {
            return new CredentialVerdict.Forward(sent, injected.query(), scrubbedOf(used, bound));
        }
        return signed(p, request, out.body(), sent, injected.query(), used, bound);
    }

    /** Runs the post-credentials stages with the serving generation's credentials. */
    private CredentialVerdict signed(ExchangePlan p, ProxyRequest request, Optional<Body> body, List<HttpHeader> sent,
                                     String query, Set<String> used, Set<String> bound) {
        HttpRequestTarget t = p.target(request.target());
        OutboundRequest outbound = new OutboundRequest(new HttpRequestTarget(t.scheme(), t.host(), t.port(),
                t.method(), t.path(), query), sent, body.orElse(Body.empty()));
        Set<String> resolved = ConcurrentHashMap.newKeySet();
        ChainResult result = engine.runPostCredentials(p.post(), outbound,
                (name, h) -> {
                    var secret = generation.credentials().lookup(name, h);
                    if (secret.isPresent()) {
                        resolved.add(name); // a signer's key ID or token is sent too: scrubbed from the response
                    }
                    return secret;
                }, new RequestContext(request.requestId(), "", "", "", p.process()));
        used.addAll(resolved);
        audit.stages(request.client(), p.facts(), result.stages());
        if (result.outcome() instanceof ChainOutcome.Deny d) {
            // the code only: a post-credentials stage's message may be about the credentials it holds
            DenyResponse response = d.response();
            return new CredentialVerdict.Refuse(new Answer(response.status(), response.error(),
                    response.error() + ": " + response.reasonCode()));
        }
        return new CredentialVerdict.Forward(result.headers(), query, scrubbedOf(used, bound));
    }

    /**
     * {@return the values the response is scrubbed of} The credentials sent and those bound to the host.
     *
     * @param used the credentials put into the request
     * @param bound the credentials bound to the admitted host
     */
    private InjectedCredentials scrubbedOf(Set<String> used, Set<String> bound) {
        Set<String> names = new TreeSet<>(used);
        names.addAll(bound);
        List<InjectedCredentials.Entry> entries = new ArrayList<>(names.size());
        for (String name : names) {
            generation.credentials().declared(name).ifPresent(c -> entries.add(new InjectedCredentials.Entry(name,
                    c.value().reveal(), "openshell:resolve:env:" + name, c.allowUnscannedResponses(),
                    used.contains(name))));
        }
        return InjectedCredentials.of(entries);
    }
}
