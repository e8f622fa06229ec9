package dev.openshell.supervisor.engine.chain;

import dev.openshell.middleware.spi.internal.StageResult;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.EnvelopeLimits;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareException;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.host.CredentialAccess;
import dev.openshell.middleware.spi.host.HostCapabilities;
import dev.openshell.middleware.spi.host.OutboundRequest;
import dev.openshell.middleware.spi.host.RestrictedMiddlewareProvider;
import dev.openshell.middleware.spi.host.Secret;
import jakarta.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The post-credentials phase in the engine (issue 14, item 2): the same fold, failure policy and records as the
 * pre-credentials chain, and {@link RestrictedMiddlewareProvider}'s promise enforced on every answer.
 */
class PostCredentialsTest {
    private static final ChainEngine ENGINE = ChainEngine.builder().build();
    private static final CredentialAccess CREDENTIALS = (name, host) -> Optional.of(Secret.of("value-of-" + name));
    private static final List<HttpHeader> HEADERS = List.of(new HttpHeader("host", "api.example.com"),
            new HttpHeader("authorization", "Bearer real"), new HttpHeader("content-length", "2"),
            new HttpHeader("connection", "keep-alive, x-hop"), new HttpHeader("x-hop", "1"),
            new HttpHeader("proxy-authorization", "Basic cHJveHk="), new HttpHeader("te", "trailers"),
            new HttpHeader("expect", "100-continue"), new HttpHeader("accept", "*/*"));
    private static final OutboundRequest REQUEST = new OutboundRequest(Stages.TARGET, HEADERS, Body.ofUtf8("hi"));

    /** A restricted built-in whose answer is scripted; records what it was given. */
    private static final class Signer implements RestrictedMiddlewareProvider {
        final UnaryOperator<OutboundRequest> script;
        final List<OutboundRequest> seen = new CopyOnWriteArrayList<>();
        final List<CredentialAccess> access = new CopyOnWriteArrayList<>();
        /** Whether the manifest declares skip_empty_body, which the post-credentials phase must not honor. */
        final boolean skipEmptyBody;

        Signer(UnaryOperator<OutboundRequest> script) {
            this(script, false);
        }

        Signer(UnaryOperator<OutboundRequest> script, boolean skipEmptyBody) {
            this.script = script;
            this.skipEmptyBody = skipEmptyBody;
        }

        @Override
        public MiddlewareManifest manifest() {
            return new MiddlewareManifest("signer", "0", List.of(new MiddlewareBinding(new BindingId("openshell/test"),
                    dev.openshell.middleware.spi.Operation.HTTP_REQUEST, Phase.POST_CREDENTIALS,
                    EnvelopeLimits.MAX_BODY_BYTES, Optional.empty(), java.util.Set.of(), skipEmptyBody)));
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            throw new MiddlewareException("wrong_phase", "post-credentials only");
        }

        @Override
        public void bind(HostCapabilities capabilities) {
        }

        @Override
        public OutboundRequest evaluatePostCredentials(BindingId bindingId, JsonObject config, OutboundRequest r) {
            throw new AssertionError("the engine passes the request's credential access");
        }

        @Override
        public OutboundRequest evaluatePostCredentials(BindingId bindingId, JsonObject config, OutboundRequest r,
                                                       CredentialAccess credentials) {
            seen.add(r);
            access.add(credentials);
            return script.apply(r);
        }
    }

    private static OutboundRequest plus(OutboundRequest r, String name, String value) {
        List<HttpHeader> h = new ArrayList<>(r.headers());
        h.add(new HttpHeader(name, value));
        return r.withHeaders(h);
    }

    private static ChainResult run(Signer signer, boolean failOpen, OutboundRequest request) {
        Stages.Spec spec = Stages.spec("sign", 1, signer);
        if (failOpen) {
            spec.open();
        }
        return ENGINE.runPostCredentials(Stages.chain(spec.build()), request, CREDENTIALS, Stages.CONTEXT);
    }

    @Test
    void aSigningStageSeesForwardableHeadersWithTheRequestsCredentialsAndItsFieldsAreForwarded() {
        Signer signer = new Signer(r -> plus(r, "X-Signature", "sig"));
        ChainResult result = run(signer, false, REQUEST);
        assertTrue(result.forwarded());
        assertSame(CREDENTIALS, signer.access.get(0));
        assertEquals(List.of("host", "authorization", "accept"),
                signer.seen.get(0).headers().stream().map(HttpHeader::name).toList(),
                "no hop-by-hop, framing, expectation or Connection-nominated line reaches the stage");
        assertEquals(new HttpHeader("X-Signature", "sig"), result.headers().get(result.headers().size() - 1));
        StageRecord record = result.stages().get(0);
        assertEquals(StageResult.ALLOWED, record.outcome());
        assertTrue(record.headersMutated());
        assertEquals("sign", record.configKey());
    }

    @Test
    void aPostCredentialsStageRunsOnAnEmptyBodyWhateverItsManifestDeclares() {
        // a signer signs the headers of a bodiless request too: skip_empty_body is honored before credentials only
        Signer signer = new Signer(r -> plus(r, "X-Signature", "sig"), true);
        ChainResult result = run(signer, false, new OutboundRequest(Stages.TARGET, HEADERS, Body.empty()));
        assertEquals(1, signer.seen.size());
        assertEquals(List.of(), result.skipped());
        assertEquals(new HttpHeader("X-Signature", "sig"), result.headers().get(result.headers().size() - 1));
    }

    @Test
    void everyBrokenPromiseFailsTheStageClosedWithItsCode() {
        HttpRequestTarget elsewhere = new HttpRequestTarget("https", "evil.example", 443, "POST", "/v1/chat", "");
        List<UnaryOperator<OutboundRequest>> scripts = List.of(
                r -> new OutboundRequest(elsewhere, r.headers(), r.body()),
                r -> new OutboundRequest(new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1/chat",
                        "leak=1"), r.headers(), r.body()),
                r -> new OutboundRequest(r.target(), r.headers(), Body.ofUtf8("other")),
                r -> r.withHeaders(r.headers().stream().map(h -> h.name().equals("host")
                        ? new HttpHeader("Host", "evil.example") : h).toList()),
                r -> r.withHeaders(r.headers().stream().filter(h -> !h.name().equals("host")).toList()),
                r -> plus(r, "Host", "api.example.com"),
                r -> plus(r, "Content-Length", "0"),
                r -> plus(r, "Transfer-Encoding", "chunked"),
                r -> plus(r, "Connection", "close"),
                r -> plus(r, "Proxy-Authorization", "Basic eA=="),
                r -> plus(r, "bad name", "x"),
                r -> plus(r, "x-ok", "line\r\nbreak"),
                r -> null);
        List<String> codes = List.of(PlatformCodes.POST_CREDENTIALS_TARGET_CHANGED,
                PlatformCodes.POST_CREDENTIALS_TARGET_CHANGED, PlatformCodes.POST_CREDENTIALS_BODY_CHANGED,
                PlatformCodes.POST_CREDENTIALS_HOST_CHANGED, PlatformCodes.POST_CREDENTIALS_HOST_CHANGED,
                PlatformCodes.POST_CREDENTIALS_HOST_CHANGED, PlatformCodes.POST_CREDENTIALS_FORBIDDEN_HEADER,
                PlatformCodes.POST_CREDENTIALS_FORBIDDEN_HEADER, PlatformCodes.POST_CREDENTIALS_FORBIDDEN_HEADER,
                PlatformCodes.POST_CREDENTIALS_FORBIDDEN_HEADER, PlatformCodes.POST_CREDENTIALS_INVALID_HEADER,
                PlatformCodes.POST_CREDENTIALS_INVALID_HEADER, PlatformCodes.RESULT_MISSING);
        for (int i = 0; i < scripts.size(); i++) {
            ChainResult closed = run(new Signer(scripts.get(i)), false, REQUEST);
            DenyResponse deny = closed.denial().orElseThrow(() -> new AssertionError("forwarded"));
            assertEquals(DenyResponse.MIDDLEWARE_FAILED, deny.error());
            assertEquals(codes.get(i), deny.reasonCode(), "script " + i);
            assertEquals(StageResult.FAILED_CLOSED, closed.stages().get(0).outcome());

            ChainResult open = run(new Signer(scripts.get(i)), true, REQUEST);
            assertTrue(open.forwarded(), "fail_open forwards as the stage received it");
            assertEquals(PostCredentialsRules.forwardable(HEADERS), open.headers());
            assertTrue(open.bypassed());
            assertEquals(codes.get(i), open.stages().get(0).failure().orElseThrow().code());
        }
    }

    @Test
    void aRequestWithoutHostMayGainExactlyTheTargetsAuthority() {
        List<HttpHeader> noHost = HEADERS.stream().filter(h -> !h.name().equals("host")).toList();
        OutboundRequest http10 = new OutboundRequest(new HttpRequestTarget("http", "api.example.com", 8080, "GET",
                "/", ""), noHost, Body.empty());
        assertTrue(run(new Signer(r -> plus(r, "Host", "api.example.com:8080")), false, http10).forwarded());
        assertEquals(PlatformCodes.POST_CREDENTIALS_HOST_CHANGED, run(new Signer(r -> plus(r, "Host",
                "api.example.com")), false, http10).denial().orElseThrow().reasonCode());
    }

    @Test
    void aThrowingStageFollowsItsOnErrorAndTheChainLimitsApply() {
        Signer failing = new Signer(r -> {
            throw new MiddlewareException("credential_unavailable", "credential 'X' is not available");
        });
        ChainResult closed = run(failing, false, REQUEST);
        assertEquals("credential_unavailable", closed.denial().orElseThrow().reasonCode());
        ChainResult open = run(failing, true, REQUEST);
        assertTrue(open.forwarded());
        assertEquals(PlatformCodes.FINDING_BYPASS, open.stages().get(0).findings().get(0).type());

        Signer signer = new Signer(r -> r);
        OutboundRequest big = new OutboundRequest(Stages.TARGET, HEADERS, Body.of(new byte[11]));
        ChainResult over = ENGINE.runPostCredentials(Stages.chain(Stages.spec("sign", 1, signer).maxBody(10)
                .build()), big, CREDENTIALS, Stages.CONTEXT);
        assertEquals(PlatformCodes.BODY_BYTES_OVER_CAPACITY, over.denial().orElseThrow().reasonCode());
        assertTrue(signer.seen.isEmpty(), "an over-cap body never reaches the stage");
    }

    @Test
    void aProviderThatIsNotRestrictedNeverRunsInThePostCredentialsPhase() {
        Stages.Scripted plain = Stages.identity();
        ChainResult r = ENGINE.runPostCredentials(Stages.chain(Stages.spec("sign", 1, plain).build()), REQUEST,
                CREDENTIALS, Stages.CONTEXT);
        assertEquals(PlatformCodes.POST_CREDENTIALS_NOT_RESTRICTED, r.denial().orElseThrow().reasonCode());
        assertEquals(0, plain.calls());
        assertFalse(r.forwarded());
    }
}
