package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * WebSocket messages of a credential-bound host are scrubbed (docs/credentials.md, section 4), end to end:
 * {@code supervisor run} from the image, a raw WebSocket client as the sandbox, and an upstream on 127.0.0.1 that
 * answers the upgrade by echoing the injected value in a text message, a binary message (also base64) and a message
 * fragmented with the value split over three fragments and a ping carrying it in between, and the value streamed as
 * the deltas of two JSON messages with a ping between them (a client joining the deltas reads it), over plain HTTP and
 * intercepted HTTPS, and on a host whose messages go through a message chain ({@code openshell/regex}). The sandbox
 * reads the placeholder in each; each scrub is a High finding and a metric; no value reaches any output of the
 * supervisor.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class WebSocketScrubIT {
    static final String TOKEN = "ws/tok+" + CredentialInjectionIT.hex(16);
    static final String PLACEHOLDER = CredentialInjectionIT.placeholder("WS_TOKEN");

    @TempDir
    static Path work;

    private static EchoingWs plain;
    private static EchoingWs tls;
    private static StackProcess supervisor;
    private static final List<String> SANDBOX_SAW = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        LoopbackUpstreams upstreams = LoopbackUpstreams.create(work, "ws.test", "wsr.test");
        plain = new EchoingWs(null);
        tls = new EchoingWs(upstreams.serverContext());
        supervisor = upstreams.start(work, """
                [[openshell.supervisor.credentials]]
                name = "WS_TOKEN"
                source = "env:IT_WS_TOKEN"
                hosts = ["ws.test", "wsr.test"]
                headers = ["x-reflect"]
                allow_plaintext = true
                """, """
                version: 1
                network_policies:
                  ws:
                    endpoints:
                      - { host: ws.test, ports: [%1$d, %2$d] }
                      - { host: wsr.test, port: %1$d, binary_messages: allow_uninspected }
                network_middlewares:
                  secrets:
                    middleware: openshell/regex
                    order: 10
                    on_error: fail_closed
                    config: { mode: redact }
                    endpoints: { include: [wsr.test] }
                """.formatted(plain.port(), tls.port()), Map.of("IT_WS_TOKEN", TOKEN));
    }

    @AfterAll
    static void stop() {
        LoopbackUpstreams.closeAll(supervisor, plain, tls);
    }

    private static List<String> secretForms() {
        return List.of(TOKEN, TOKEN.replace("/", "\\/"), TOKEN.replace("/", "%2F").replace("+", "%2B"),
                Base64.getEncoder().encodeToString(TOKEN.getBytes(StandardCharsets.UTF_8)), TOKEN.substring(4, 9));
    }

    /** {@return a realtime API's text delta message} */
    static String delta(String text) {
        return "{\"type\":\"response.text.delta\",\"delta\":\"" + text + "\"}";
    }

    /** Upgrades through the supervisor (absolute-form, or origin-form inside an intercepted CONNECT tunnel). */
    private static Socket upgrade(boolean https, String host) throws Exception {
        EchoingWs up = https ? tls : plain;
        String authority = host + ":" + up.port();
        Socket s = new Socket(InetAddress.getByName("127.0.0.1"), supervisor.port());
        s.setSoTimeout(30_000);
        String target = "http://" + authority + "/realtime";
        if (https) {
            s.getOutputStream().write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            String established = WsPeers.head(s.getInputStream());
            assertTrue(established.startsWith("HTTP/1.1 200"), established);
            SSLContext ctx = ProxyWorld.trusting(LoopbackUpstreams.supervisorCa(work));
            SSLSocket t = (SSLSocket) ctx.getSocketFactory().createSocket(s, host, up.port(), true);
            t.startHandshake();
            s = t;
            target = "/realtime";
        }
        s.getOutputStream().write(("GET " + target + " HTTP/1.1\r\nHost: " + authority + "\r\nX-Reflect: "
                + PLACEHOLDER + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                + "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        return s;
    }

    @Test
    @Order(1)
    void serverMessagesEchoingTheValueComeBackAsThePlaceholderOverHttpAndHttps() throws Exception {
        for (boolean https : new boolean[] {false, true}) {
            exchange(https, "ws.test");
        }
    }

    /** On a host whose messages go through a message chain ({@code openshell/regex}): scrubbed before the chain. */
    @Test
    @Order(2)
    void serverMessagesOfAMessageChainSessionAreScrubbedToo() throws Exception {
        exchange(false, "wsr.test");
    }

    private static void exchange(boolean https, String host) throws Exception {
        try (Socket s = upgrade(https, host)) {
            String head = WsPeers.head(s.getInputStream());
            assertTrue(head.startsWith("HTTP/1.1 101"), head);
            List<WsPeers.Frame> frames = new ArrayList<>();
            StringBuilder saw = new StringBuilder();
            while (true) {
                WsPeers.Frame f = WsPeers.read(s.getInputStream());
                frames.add(f);
                saw.append(new String(f.payload(), StandardCharsets.ISO_8859_1)).append('\n');
                if (f.opcode() == 8 || f.opcode() == -1) {
                    break;
                }
            }
            SANDBOX_SAW.add(saw.toString());
            s.getOutputStream().write(WsPeers.frame(8, true, new byte[] {3, (byte) 0xE8}, true));
            s.getOutputStream().flush();
            // pings are never held, so a held message may arrive after a ping sent after it: data and pings apart
            List<WsPeers.Frame> data = frames.stream().filter(f -> f.opcode() != 9).toList();
            List<String> pings = frames.stream().filter(f -> f.opcode() == 9).map(WsPeers.Frame::text).toList();
            assertEquals("text " + PLACEHOLDER, data.get(0).text(), saw.toString());
            assertEquals(2, data.get(1).opcode());
            assertEquals("bin " + PLACEHOLDER + " b64 " + PLACEHOLDER, data.get(1).text());
            assertEquals("frag " + PLACEHOLDER + " end", data.get(2).text());
            // the first delta is held until the second decides it; a client joining the deltas reads the placeholder
            assertEquals(delta(""), data.get(3).text());
            assertEquals(delta(PLACEHOLDER + " done"), data.get(4).text());
            assertEquals(8, data.get(5).opcode());
            assertEquals(List.of(PLACEHOLDER, "p"), pings);
            for (String form : secretForms()) {
                assertFalse(saw.toString().contains(form), "the sandbox read a secret form back: " + saw);
            }
        }
        String received = (https ? tls : plain).heads.poll(30, TimeUnit.SECONDS);
        assertTrue(received != null && received.contains("X-Reflect: " + TOKEN), "the upstream got the value");
        assertFalse(received.toLowerCase(java.util.Locale.ROOT).contains("sec-websocket-extensions"),
                "no extension was offered: " + received);
    }

    @Test
    @Order(100)
    void eachScrubIsAHighFindingAndAMetricAndNoValueReachesAnyOutput() throws Exception {
        String metrics = supervisor.metrics();
        assertTrue(metrics.contains("supervisor_response_scrubs_total{credential=\"WS_TOKEN\"}"), metrics);
        List<JsonObject> scrubs = supervisor.auditEvents().stream().filter(e -> e.getInt("class_uid", 0) == 2004
                && e.getJsonObject("finding_info").getJsonArray("types").getString(0)
                .equals("credential.response_scrubbed")).toList();
        assertEquals(15, scrubs.size(), "one finding per scrubbed message, and one for the deltas (5 in each of 3"
                + " sessions)");
        assertTrue(scrubs.stream().allMatch(e -> e.getInt("severity_id") == 4), "High");
        supervisor.close();
        Map<String, String> outputs = Map.of("standard output", supervisor.stdout(), "standard error",
                supervisor.stderr(), "audit log", supervisor.auditText(), "/metrics", metrics,
                "messages to the sandbox", String.join("\n", SANDBOX_SAW));
        List<String> forms = secretForms();
        for (var o : outputs.entrySet()) {
            for (int i = 0; i < forms.size(); i++) {
                assertFalse(o.getValue().contains(forms.get(i)), o.getKey() + " holds secret form #" + i);
            }
        }
    }

    /** An upstream that answers each upgrade with messages echoing the {@code X-Reflect} value it received. */
    static final class EchoingWs implements AutoCloseable {
        final LinkedBlockingQueue<String> heads = new LinkedBlockingQueue<>();
        private final WsPeers.Acceptor acceptor;

        EchoingWs(SSLContext tls) throws IOException {
            acceptor = new WsPeers.Acceptor(tls, this::serve);
        }

        int port() {
            return acceptor.port();
        }

        private void serve(Socket s) {
            try (s) {
                InputStream in = s.getInputStream();
                String head = WsPeers.head(in);
                heads.add(head);
                String value = head.lines().filter(l -> l.toLowerCase(java.util.Locale.ROOT).startsWith("x-reflect:"))
                        .findFirst().map(l -> l.substring(l.indexOf(':') + 1).strip()).orElse("none");
                byte[] v = value.getBytes(StandardCharsets.UTF_8);
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                out.writeBytes(("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
                out.writeBytes(WsPeers.text("text " + value, false));
                out.writeBytes(WsPeers.frame(2, true, ("bin " + value + " b64 " + Base64.getEncoder()
                        .encodeToString(v)).getBytes(StandardCharsets.UTF_8), false));
                out.writeBytes(WsPeers.frame(1, false, ("frag " + value.substring(0, 4))
                        .getBytes(StandardCharsets.UTF_8), false));
                out.writeBytes(WsPeers.frame(9, true, v, false));
                out.writeBytes(WsPeers.frame(0, false, value.substring(4, 9).getBytes(StandardCharsets.UTF_8),
                        false));
                out.writeBytes(WsPeers.frame(0, true, (value.substring(9) + " end").getBytes(StandardCharsets.UTF_8),
                        false));
                out.writeBytes(WsPeers.text(delta(value.substring(0, 6)), false));
                out.writeBytes(WsPeers.frame(9, true, "p".getBytes(StandardCharsets.UTF_8), false));
                out.writeBytes(WsPeers.text(delta(value.substring(6) + " done"), false));
                out.writeBytes(WsPeers.frame(8, true, new byte[] {3, (byte) 0xE8}, false));
                OutputStream o = s.getOutputStream();
                o.write(out.toByteArray());
                o.flush();
                WsPeers.read(in); // the client's close frame, or the end
            } catch (IOException e) {
                // the peer went away
            }
        }

        @Override
        public void close() throws IOException {
            acceptor.close();
        }
    }
}
