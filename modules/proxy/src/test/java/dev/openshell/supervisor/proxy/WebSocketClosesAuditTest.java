package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.SessionEndReason;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every close the proxy makes because a WebSocket peer broke RFC 6455 is exactly one refusal record
 * ({@code websocket_protocol_error}, status 0, the close named in {@code cause}), on every relay: an L7
 * {@code protocol: websocket} endpoint, a session whose messages go only through the message chain, both, and a
 * session whose server messages are scrubbed; for the client's frames ({@code framing}) and the server's
 * ({@code upstream}). Attacker pass 8, P8-3: the message-chain-only session recorded none. Real proxy, real loopback
 * upstream ({@link TestUpstream}).
 */
class WebSocketClosesAuditTest {
    @TempDir
    Path tmp;

    /** Which relay the session takes. */
    enum Path7 {
        /** The L7 rules decide on the client's text messages. */
        L7,
        /** Only the message chain reads the messages. */
        CHAIN,
        /** Both. */
        BOTH
    }

    /** {@return a client frame, masked with a zero key unless {@code masked} is false} */
    static byte[] frame(int b0, byte[] p, boolean masked) {
        return WebSocketBudgetTest.frame(b0, p, masked);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** {@return 4097 fragments of one text message: one past {@code MAX_FRAGMENTS}} */
    static byte[] tooManyFragments() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(frame(0x01, utf8("a"), true));
        for (int i = 0; i < 4096; i++) {
            out.writeBytes(frame(0x00, utf8("a"), true));
        }
        return out.toByteArray();
    }

    /** {@return the head of a text frame announcing one byte more than 4 MiB} */
    static byte[] oversizedHead(boolean masked) {
        long len = 4L * 1024 * 1024 + 1;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(0x81);
        out.write((masked ? 0x80 : 0) | 127);
        for (int i = 7; i >= 0; i--) {
            out.write((int) (len >>> (8 * i)) & 0xFF);
        }
        return out.toByteArray();
    }

    /** The client's breaches: what it sends, the close status, the refusal's cause. */
    static Stream<Arguments> clientBreaches() {
        List<Arguments> out = new ArrayList<>();
        Object[][] cases = {
            {"invalid UTF-8", frame(0x81, new byte[] {(byte) 0xFF, (byte) 0xFE, 'x'}, true), 1007, "invalid_payload"},
            {"4097 fragments", tooManyFragments(), 1009, "message_too_big"},
            {"a frame over 4 MiB", oversizedHead(true), 1009, "message_too_big"},
            {"unmasked", frame(0x81, utf8("hi"), false), 1002, "protocol_violation"},
            {"RSV1", frame(0xC1, utf8("hi"), true), 1002, "protocol_violation"},
            {"reserved opcode", frame(0x83, utf8("hi"), true), 1002, "protocol_violation"},
            {"a ping of 126 bytes", frame(0x89, new byte[126], true), 1002, "protocol_violation"},
            {"a continuation first", frame(0x80, utf8("hi"), true), 1002, "protocol_violation"},
            {"a close of one byte", frame(0x88, new byte[] {0x03}, true), 1002, "protocol_violation"},
            {"close code 1005", frame(0x88, new byte[] {0x03, (byte) 0xED}, true), 1002, "protocol_violation"},
            {"close code 2999", frame(0x88, new byte[] {0x0B, (byte) 0xB7}, true), 1002, "protocol_violation"},
            // RFC 6455 sections 5.5.1 and 7.1.6: a close frame's reason is UTF-8, else 1007
            {"a close reason not UTF-8", frame(0x88, new byte[] {0x03, (byte) 0xE8, 'a', (byte) 0xFF, (byte) 0xFE},
                    true), 1007, "invalid_payload"},
            {"a close reason cut inside a character", frame(0x88, new byte[] {0x03, (byte) 0xE8, (byte) 0xE2,
                    (byte) 0x82}, true), 1007, "invalid_payload"},
        };
        for (Path7 p : Path7.values()) {
            for (Object[] c : cases) {
                out.add(Arguments.of(p, c[0], c[1], c[2], c[3]));
            }
        }
        return out.stream();
    }

    /** {@return a message chain reading the given directions, forwarding every message unchanged} */
    static MessageSession chain(boolean toUpstream, boolean toClient) {
        return new MessageSession() {
            @Override
            public boolean inspects(Direction d) {
                return d == Direction.TO_UPSTREAM ? toUpstream : toClient;
            }

            @Override
            public void start(String selectedSubprotocol) {
            }

            @Override
            public Verdict text(Direction d, String text) {
                return new Verdict(true, text, false);
            }

            @Override
            public boolean uninspected(Direction d) {
                return true;
            }

            @Override
            public void end(SessionEndReason reason) {
            }
        };
    }

    private ProxyFixture fixture(Path7 path, boolean serverSide) throws Exception {
        return ProxyFixture.withSteps(tmp, s -> {
            if (path != Path7.CHAIN) {
                s.l7 = (plan, request, body) -> new L7Verdict.Allow(Optional.empty(), Optional.of(message -> true));
            }
            if (path != Path7.L7) {
                s.sessions = (plan, request) -> new SessionVerdict.Inspect(chain(true, serverSide), true);
            }
        });
    }

    /** {@return the only refusal recorded, after checking there is exactly one} */
    private static ProxyRefusal only(ProxyFixture fx) {
        assertEquals(1, fx.hook.refusals.size(), () -> "exactly one refusal: " + fx.hook.refusals);
        return fx.hook.refusals.get(0);
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("clientBreaches")
    void aClientBreachIsOneFramingRefusal(Path7 path, String what, byte[] sent, int status, String cause)
            throws Exception {
        try (ProxyFixture fx = fixture(path, false); RawClient c = WebSocketBudgetTest.upgraded(fx, "")) {
            WebSocketBudgetTest.sendAsync(c, sent);
            assertEquals(status, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)), what);
            // the refusal's line is written before the close frame goes (the connection's audit barrier)
            ProxyRefusal r = only(fx);
            assertEquals("websocket_protocol_error", r.code());
            assertEquals(ProxyRefusal.Kind.FRAMING, r.kind());
            assertEquals(Optional.of(cause), r.cause());
            assertEquals(0, r.status(), "a close frame, not an HTTP answer");
            assertTrue(r.detail().contains("closed with " + status), r.detail());
            assertTrue(r.requestId().isPresent() && r.destination().isPresent(), "the exchange's facts");
        }
    }

    /** The server's breaches on a session whose server messages a stage reads. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("serverBreaches")
    void aServerBreachIsOneUpstreamRefusal(String what, byte[] sent, int status, String cause) throws Exception {
        try (ProxyFixture fx = fixture(Path7.CHAIN, true)) {
            fx.upstream.upgrade = WebSocketScrubTest.switched("", sent);
            try (RawClient c = WebSocketBudgetTest.upgraded(fx, "")) {
                assertEquals(status, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)), what);
            }
            ProxyRefusal r = only(fx);
            assertEquals("websocket_protocol_error", r.code());
            assertEquals(ProxyRefusal.Kind.UPSTREAM, r.kind());
            assertEquals(Optional.of(cause), r.cause());
            assertTrue(r.detail().startsWith("the upstream broke RFC 6455"), r.detail());
        }
    }

    static Stream<Arguments> serverBreaches() {
        return Stream.of(
                Arguments.of("masked", frame(0x81, utf8("hi"), true), 1002, "protocol_violation"),
                Arguments.of("invalid UTF-8", frame(0x81, new byte[] {(byte) 0xC3, '('}, false), 1007,
                        "invalid_payload"),
                Arguments.of("a frame over 4 MiB", oversizedHead(false), 1009, "message_too_big"),
                Arguments.of("a close reason not UTF-8", frame(0x88, new byte[] {0x03, (byte) 0xE8, (byte) 0xC3, '('},
                        false), 1007, "invalid_payload"));
    }

    /**
     * A scrubbed session's server messages: a breach of the framing is a {@code websocket_protocol_error}, while a
     * message over the limits is the scrub's own record ({@code response_uninspectable}), not a second one.
     */
    @Test
    void aScrubbedServerBreachIsRecordedOnceByItsOwnRule() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.credentials = WebSocketScrubTest.inject())) {
            fx.upstream.upgrade = WebSocketScrubTest.switched("", frame(0x81, utf8("hi"), true));
            try (RawClient c = WebSocketScrubTest.upgraded(fx, "")) {
                assertEquals(1002, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)));
            }
            ProxyRefusal r = only(fx);
            assertEquals("websocket_protocol_error", r.code());
            assertEquals(ProxyRefusal.Kind.UPSTREAM, r.kind());
            fx.hook.refusals.clear();
            fx.upstream.upgrade = WebSocketScrubTest.switched("", oversizedHead(false));
            try (RawClient c = WebSocketScrubTest.upgraded(fx, "")) {
                assertEquals(1009, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)));
            }
            assertEquals(List.of(), fx.hook.refusals, "no websocket_protocol_error beside the scrub's record");
            assertEquals(List.of("response_uninspectable false"), fx.hook.unscannable);
            fx.upstream.upgrade = WebSocketScrubTest.switched("", frame(0x88, new byte[] {0x03, (byte) 0xE8,
                (byte) 0xED, (byte) 0xA0, (byte) 0x80}, false)); // a UTF-16 surrogate encoded: not UTF-8
            try (RawClient c = WebSocketScrubTest.upgraded(fx, "")) {
                assertEquals(1007, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)));
            }
            assertEquals(Optional.of("invalid_payload"), only(fx).cause());
        }
    }

    /** A peer's own close (a code it may send) ends the session without a refusal. */
    @Test
    void aPeersCloseIsNoRefusal() throws Exception {
        try (ProxyFixture fx = fixture(Path7.BOTH, false); RawClient c = WebSocketBudgetTest.upgraded(fx, "")) {
            WebSocketBudgetTest.sendAsync(c, frame(0x88, new byte[] {0x0F, (byte) 0xA0}, true)); // 4000
            // the echo upstream answers with the same close frame: it went through
            assertEquals(4000, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)));
            assertEquals(List.of(), fx.hook.refusals);
        }
        try (ProxyFixture fx = fixture(Path7.CHAIN, false); RawClient c = WebSocketBudgetTest.upgraded(fx, "")) {
            byte[] reason = utf8("au revoir \u00e9\u20ac");
            byte[] payload = new byte[reason.length + 2];
            payload[0] = 0x03;
            payload[1] = (byte) 0xE8;
            System.arraycopy(reason, 0, payload, 2, reason.length);
            WebSocketBudgetTest.sendAsync(c, frame(0x88, payload, true)); // 1000 with a UTF-8 reason
            assertEquals(1000, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)));
            assertEquals(List.of(), fx.hook.refusals);
        }
    }

    /** A denial by the L7 rules or a stage is recorded where it is decided: the relay adds no refusal. */
    @Test
    void aDeniedMessageAddsNoRefusalOfTheRelay() throws Exception {
        try (ProxyFixture fx = ProxyFixture.withSteps(tmp, s -> s.l7 = (plan, request, body) ->
                new L7Verdict.Allow(Optional.empty(), Optional.of(message -> false)));
             RawClient c = WebSocketBudgetTest.upgraded(fx, "")) {
            WebSocketBudgetTest.sendAsync(c, frame(0x81, utf8("no"), true));
            assertEquals(1008, WebSocketBudgetTest.closeStatus(WebSocketBudgetTest.next(c)));
            assertEquals(List.of(), fx.hook.refusals);
        }
    }
}
