package dev.openshell.supervisor.engine.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.ConfigValidation;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.MiddlewareBinding;
import dev.openshell.middleware.spi.MiddlewareManifest;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.WebSocketMessage;
import dev.openshell.middleware.spi.WebSocketMessageResult;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.WebSocketPreflightDecision;
import dev.openshell.middleware.spi.WebSocketSession;
import dev.openshell.middleware.spi.internal.OnError;
import jakarta.json.JsonObject;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The message chain's rules with in-process stages ({@link MessageChain}). */
class MessageChainTest {
    private static final dev.openshell.middleware.spi.HttpRequestTarget TARGET =
            new dev.openshell.middleware.spi.HttpRequestTarget("http", "api.test", 80, "GET", "/ws", "");

    /** An in-process stage: uppercases "secret", denies "deny", answers the preflight with {@code action}. */
    static final class Stage implements MiddlewareProvider {
        final WebSocketPreflightDecision.Action action;
        final List<String> log = new CopyOnWriteArrayList<>();
        volatile long echoOffset;
        volatile CountDownLatch block;

        Stage(WebSocketPreflightDecision.Action action) {
            this.action = action;
        }

        @Override
        public MiddlewareManifest manifest() {
            return new MiddlewareManifest("stage", "1", List.of(MiddlewareBinding.httpRequest("acme/stage", 0)));
        }

        @Override
        public ConfigValidation validateConfig(BindingId bindingId, JsonObject config) {
            return ConfigValidation.ok();
        }

        @Override
        public HttpRequestResult evaluate(HttpRequestEvaluation evaluation) {
            return HttpRequestResult.allow();
        }

        @Override
        public WebSocketSession openWebSocketSession(BindingId bindingId, Phase phase) {
            return new WebSocketSession() {
                @Override
                public WebSocketPreflightDecision preflight(WebSocketPreflight p) {
                    log.add("preflight " + p.phase());
                    awaitBlock();
                    return new WebSocketPreflightDecision(action, "", action == WebSocketPreflightDecision.Action.DENY
                            ? "declined" : "", List.of(), java.util.Map.of());
                }

                @Override
                public WebSocketMessageResult message(WebSocketMessage m) {
                    log.add(m.sequence() + " " + m.text());
                    if (m.text().contains("deny")) {
                        return WebSocketMessageResult.deny(m.sequence(), "no", "marker");
                    }
                    if (m.text().contains("secret")) {
                        return WebSocketMessageResult.replace(m.sequence() + echoOffset,
                                m.text().replace("secret", "[X]"), List.of());
                    }
                    return WebSocketMessageResult.allow(m.sequence() + echoOffset);
                }

                @Override
                public void end(SessionEndReason reason) {
                    log.add("end " + reason);
                }
            };
        }

        private void awaitBlock() {
            CountDownLatch b = block;
            if (b != null) {
                try {
                    b.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted");
                }
            }
        }
    }

    private static MessageChain.Member member(String key, Stage stage, OnError onError, Phase phase) {
        return new MessageChain.Member(new StageSpec(key, new BindingId("acme/stage"), stage, Provenance.THIRD_PARTY,
                key.length(), onError, 0, 500, jakarta.json.JsonValue.EMPTY_JSON_OBJECT, h -> true), phase);
    }

    private static MessageChain.Opening open(MessageChain chain, MessageChain.Member... members) {
        return chain.open(List.of(members), m -> new WebSocketPreflight(m.spec().bindingId(), "r-1", m.phase(),
                RequestContext.of("r-1"), m.spec().config(), TARGET, List.of()));
    }

    @Test
    void aLaterStageSeesAnEarlierReplacementAndADenyClosesTheSession() {
        Stage a = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        Stage b = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        var o = assertInstanceOf(MessageChain.Opened.class, open(new MessageChain(),
                member("a", a, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS),
                member("bb", b, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS)));
        var f = assertInstanceOf(MessageChain.Forward.class, o.session().message(Phase.PRE_CREDENTIALS, 1,
                "a secret"));
        assertEquals("a [X]", f.text());
        assertTrue(b.log.contains("1 a [X]"), b.log.toString());
        var c = assertInstanceOf(MessageChain.Close.class, o.session().message(Phase.PRE_CREDENTIALS, 3, "deny"));
        assertEquals(SessionEndReason.MIDDLEWARE_DENIAL, c.reason());
        assertEquals("marker", c.reasonCode());
        o.session().end(c.reason());
        o.session().end(SessionEndReason.NORMAL);
        assertEquals(1, a.log.stream().filter(l -> l.startsWith("end")).count(), "one end per stream");
        assertTrue(b.log.contains("end MIDDLEWARE_DENIAL"));
        assertTrue(!b.log.contains("3 deny"), "a later stage never sees a message an earlier one denied");
    }

    @Test
    void aPreflightDenyWinsEvenUnderFailOpenAndSkipEndsThatStream() {
        Stage skip = new Stage(WebSocketPreflightDecision.Action.SKIP);
        Stage deny = new Stage(WebSocketPreflightDecision.Action.DENY);
        var r = assertInstanceOf(MessageChain.Refused.class, open(new MessageChain(),
                member("s", skip, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS),
                member("dd", deny, OnError.FAIL_OPEN, Phase.PRE_CREDENTIALS)));
        assertEquals("middleware_denied", r.reasonCode());
        assertTrue(skip.log.contains("end STAGE_SKIPPED"));
        assertTrue(deny.log.contains("end MIDDLEWARE_DENIAL"));
    }

    @Test
    void aWrongSequenceEchoIsAFailureThatFollowsOnError() {
        Stage open = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        open.echoOffset = 1;
        var o = assertInstanceOf(MessageChain.Opened.class, open(new MessageChain(),
                member("o", open, OnError.FAIL_OPEN, Phase.PRE_CREDENTIALS)));
        var f = assertInstanceOf(MessageChain.Forward.class, o.session().message(Phase.PRE_CREDENTIALS, 1, "x"));
        assertEquals(MessageChain.Kind.BYPASSED, f.events().getFirst().kind());
        assertEquals("middleware_sequence_mismatch", f.events().getFirst().reasonCode());
        assertTrue(open.log.contains("end MIDDLEWARE_FAILURE"), "the failed stream ends");
        Stage closed = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        closed.echoOffset = 1;
        var o2 = assertInstanceOf(MessageChain.Opened.class, open(new MessageChain(),
                member("c", closed, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS)));
        var c = assertInstanceOf(MessageChain.Close.class, o2.session().message(Phase.PRE_CREDENTIALS, 1, "x"));
        assertEquals(SessionEndReason.MIDDLEWARE_FAILURE, c.reason());
    }

    @Test
    void aPreflightThatDoesNotAnswerWithinTheCapFollowsOnError() {
        Stage slow = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        slow.block = new CountDownLatch(1);
        try {
            var r = assertInstanceOf(MessageChain.Refused.class, open(new MessageChain(),
                    member("slow", slow, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS)));
            assertEquals("middleware_failed", r.reasonCode());
            assertEquals("middleware_timeout", r.events().getFirst().reasonCode());
        } finally {
            slow.block.countDown();
        }
    }

    /** A client: the address 10.0.0.{@code n}, its process {@code pid} (0: not known). */
    private static SessionSlots.Owner owner(int n, long pid) {
        try {
            return new SessionSlots.Owner(Optional.of(java.net.InetAddress.getByAddress(new byte[] {10, 0, 0,
                    (byte) n})), pid == 0 ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(pid));
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    private static MessageChain.Opening open(MessageChain chain, SessionSlots.Owner owner, MessageChain.Member m) {
        return chain.open(List.of(m), x -> new WebSocketPreflight(x.spec().bindingId(), "r-1", x.phase(),
                RequestContext.of("r-1"), x.spec().config(), TARGET, List.of()), owner);
    }

    /**
     * One address cannot take every slot (issue: one client held all 32): its share is 16, its identified process
     * may hold 4 more, another process of the same address its own 4, other addresses the rest; over a share the
     * session is refused under fail_closed (its code) and opens no stream under fail_open; a freed slot is reused.
     */
    @Test
    void sessionSlotsAreSharedFairlyBetweenAddressesAndProcesses() {
        MessageChain chain = new MessageChain();
        Stage s = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        MessageChain.Member closed = member("k", s, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS);
        List<MessageChain.Session> flood = new java.util.ArrayList<>();
        for (int i = 0; i < SessionSlots.DEFAULT_PER_CLIENT; i++) {
            flood.add(((MessageChain.Opened) open(chain, owner(1, 0), closed)).session());
        }
        var client = assertInstanceOf(MessageChain.Refused.class, open(chain, owner(1, 0), closed));
        assertEquals("client_session_limit", client.reasonCode(), "no process known: the share is a hard cap");
        assertEquals(MessageChain.Kind.FAILED, client.events().getFirst().kind());
        assertEquals("client_session_limit", client.events().getFirst().reasonCode(), "audited with its code");
        for (int i = 0; i < SessionSlots.DEFAULT_PER_PROCESS; i++) {
            flood.add(((MessageChain.Opened) open(chain, owner(1, 1001), closed)).session());
        }
        assertEquals("process_session_limit", assertInstanceOf(MessageChain.Refused.class,
                open(chain, owner(1, 1001), closed)).reasonCode());
        var bypass = assertInstanceOf(MessageChain.Opened.class, open(chain, owner(1, 1001),
                member("k", s, OnError.FAIL_OPEN, Phase.PRE_CREDENTIALS)));
        assertFalse(bypass.session().inspects(Phase.PRE_CREDENTIALS), "fail_open over the share: no stream");
        assertEquals(MessageChain.Kind.BYPASSED, bypass.events().getFirst().kind());
        MessageChain.Session sibling = ((MessageChain.Opened) open(chain, owner(1, 1002), closed)).session();
        assertTrue(sibling.inspects(Phase.PRE_CREDENTIALS), "another process of the address keeps its own");
        MessageChain.Session other = ((MessageChain.Opened) open(chain, owner(2, 0), closed)).session();
        assertTrue(other.inspects(Phase.PRE_CREDENTIALS), "another address still gets a slot");
        flood.getFirst().end(SessionEndReason.NORMAL);
        assertTrue(((MessageChain.Opened) open(chain, owner(1, 0), closed)).session().inspects(
                Phase.PRE_CREDENTIALS), "a slot of the share freed is the address's again");
    }

    /**
     * Any number of processes of one address take at most 8 slots beyond its share of 16, so other addresses keep 8
     * of the 32 (four processes took all 32 when each had 4 of its own); an identified process that holds the share
     * takes none beyond it, so the agent next to it keeps them.
     */
    @Test
    void manyProcessesOfOneAddressLeaveOtherAddressesTheirSlots() {
        MessageChain chain = new MessageChain();
        MessageChain.Member closed = member("k", new Stage(WebSocketPreflightDecision.Action.INSPECT),
                OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS);
        for (int i = 0; i < SessionSlots.DEFAULT_PER_CLIENT; i++) {
            assertInstanceOf(MessageChain.Opened.class, open(chain, owner(1, 2000), closed));
        }
        assertEquals("process_session_limit", assertInstanceOf(MessageChain.Refused.class,
                open(chain, owner(1, 2000), closed)).reasonCode(), "the process holding the share takes no more");
        int beyond = 0;
        String last = "";
        for (long pid = 3000; pid < 3010; pid++) {
            for (int i = 0; i < SessionSlots.DEFAULT_PER_PROCESS + 1; i++) {
                MessageChain.Opening o = open(chain, owner(1, pid), closed);
                if (o instanceof MessageChain.Refused r) {
                    last = r.reasonCode();
                } else {
                    beyond++;
                }
            }
        }
        assertEquals(2 * SessionSlots.DEFAULT_PER_PROCESS, beyond, "the address's slots beyond its share");
        assertEquals("client_session_limit", last, "the address's pool beyond its share is spent");
        for (int i = 0; i < MessageChain.MAX_CONCURRENT_SESSIONS - SessionSlots.DEFAULT_PER_CLIENT - beyond; i++) {
            assertInstanceOf(MessageChain.Opened.class, open(chain, owner(2 + i / 4, 0), closed),
                    "other addresses keep the rest: session " + i);
        }
        assertEquals("session_capacity", assertInstanceOf(MessageChain.Refused.class,
                open(chain, owner(9, 0), closed)).reasonCode());
    }

    @Test
    void theThirtyThirdSessionIsRefusedUnderFailClosedAndBypassedUnderFailOpen() {
        MessageChain chain = new MessageChain();
        Stage s = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        List<MessageChain.Session> open = new java.util.ArrayList<>();
        for (int i = 0; i < MessageChain.MAX_CONCURRENT_SESSIONS; i++) { // 8 addresses, 4 sessions each
            open.add(((MessageChain.Opened) open(chain, owner(10 + i / 4, 0),
                    member("k", s, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS))).session());
        }
        var r = assertInstanceOf(MessageChain.Refused.class,
                open(chain, member("k", s, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS)));
        assertEquals("session_capacity", r.reasonCode());
        var bypass = assertInstanceOf(MessageChain.Opened.class,
                open(chain, member("k", s, OnError.FAIL_OPEN, Phase.PRE_CREDENTIALS)));
        assertTrue(!bypass.session().inspects(Phase.PRE_CREDENTIALS));
        assertEquals(MessageChain.Kind.BYPASSED, bypass.events().getFirst().kind());
        open.getFirst().end(SessionEndReason.NORMAL);
        assertInstanceOf(MessageChain.Opened.class,
                open(chain, member("k", s, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS)), "a freed slot is reused");
    }

    /**
     * Attacker pass 15, P17-2: a config that joins in both directions is one refusal when no slot is free (one audit
     * pair per joining config, not per direction); two configs are two.
     */
    @Test
    void aSlotRefusalIsOneEventPerJoiningConfig() {
        MessageChain chain = new MessageChain();
        Stage s = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        List<MessageChain.Session> open = new java.util.ArrayList<>();
        for (int i = 0; i < MessageChain.MAX_CONCURRENT_SESSIONS; i++) {
            open.add(((MessageChain.Opened) open(chain, owner(10 + i / 4, 0),
                    member("k", s, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS))).session());
        }
        var r = assertInstanceOf(MessageChain.Refused.class, open(chain,
                member("k", s, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS),
                member("k", s, OnError.FAIL_CLOSED, Phase.PRE_RETURN),
                member("other", s, OnError.FAIL_CLOSED, Phase.PRE_RETURN)));
        assertEquals(List.of("k", "other"), r.events().stream().map(MessageChain.Event::configKey).toList());
        open.forEach(x -> x.end(SessionEndReason.NORMAL));
    }

    @Test
    void eachDirectionRunsOnlyItsOwnStreams() {
        Stage up = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        Stage back = new Stage(WebSocketPreflightDecision.Action.INSPECT);
        var o = assertInstanceOf(MessageChain.Opened.class, open(new MessageChain(),
                member("u", up, OnError.FAIL_CLOSED, Phase.PRE_CREDENTIALS),
                member("bk", back, OnError.FAIL_CLOSED, Phase.PRE_RETURN)));
        o.session().message(Phase.PRE_RETURN, 1, "from upstream");
        o.session().message(Phase.PRE_CREDENTIALS, 2, "from client");
        assertTrue(back.log.contains("1 from upstream") && !back.log.contains("2 from client"), back.log.toString());
        assertTrue(up.log.contains("2 from client") && !up.log.contains("1 from upstream"), up.log.toString());
        assertTrue(back.log.contains("preflight PRE_RETURN"));
    }
}
