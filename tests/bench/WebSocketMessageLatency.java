/*
 * Latency added per WebSocket text message by one message-chain stage: an in-process stage (openshell/regex, loaded
 * from the image's modules) and one external stage over loopback gRPC (Privacy Guard's EvaluateWebSocketSession, its
 * own process), each driven through the supervisor's MessageChain as the proxy drives it. Not a test: a bounded
 * measurement loop, run by websocket-message-latency.sh. The cases alternate in rounds (in-process, gRPC, in-process,
 * ...) so that machine noise falls on both alike; every case is warmed first.
 *
 * Usage: java --module-path jlink/target/modules --add-modules dev.openshell.supervisor.grpc,\
 *        dev.openshell.builtin.regex,org.eclipse.parsson tests/bench/WebSocketMessageLatency.java PORT [ROUNDS]
 */

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import dev.openshell.middleware.spi.SessionEndReason;
import dev.openshell.middleware.spi.WebSocketPreflight;
import dev.openshell.middleware.spi.internal.OnError;
import dev.openshell.supervisor.engine.chain.MessageChain;
import dev.openshell.supervisor.engine.chain.Provenance;
import dev.openshell.supervisor.engine.chain.StageSpec;
import dev.openshell.supervisor.grpc.ExternalServices;
import dev.openshell.supervisor.grpc.RegistryListener;
import dev.openshell.supervisor.grpc.RetryPolicy;
import dev.openshell.supervisor.grpc.ServiceRegistration;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.ServiceLoader;

public class WebSocketMessageLatency {
    record Case(String name, MessageChain.Session session, String text) {
    }

    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        ServiceRegistration reg = ServiceRegistration.builder("privacy-guard", URI.create("http://127.0.0.1:" + port),
                4L << 20).allowInsecure(true).timeout(Duration.ofSeconds(5)).build();
        MiddlewareProvider regex = ServiceLoader.load(MiddlewareProvider.class).stream()
                .map(ServiceLoader.Provider::get).filter(p -> p.manifest().name().equals("openshell-regex"))
                .findFirst().orElseThrow();
        try (ExternalServices services = ExternalServices.connect(List.of(reg), RegistryListener.NONE,
                RetryPolicy.DEFAULT)) {
            if (!services.failures().isEmpty()) {
                throw new IllegalStateException(services.failures().toString());
            }
            MiddlewareProvider pg = services.claims().getFirst().provider();
            MessageChain chain = new MessageChain();
            String small = "{\"type\":\"input_text\",\"text\":\"" + "Please summarise the quarterly report. "
                    .repeat(50) + "\"}"; // about 2 KiB, nothing to redact
            String mail = "{\"type\":\"input_text\",\"text\":\"" + "Send it to finance@corp.example today. "
                    .repeat(50) + "\"}"; // about 2 KiB, redacted by both stages
            JsonObject regexConfig = Json.createObjectBuilder().add("mode", "redact").build();
            List<Case> cases = List.of(
                    new Case("in-process openshell/regex, 2 KiB, nothing found",
                            open(chain, regex, "openshell/regex", regexConfig), small),
                    new Case("loopback gRPC Privacy Guard, 2 KiB, nothing found",
                            open(chain, pg, "examples/privacy-guard", JsonObject.EMPTY_JSON_OBJECT), small),
                    new Case("in-process openshell/regex, 2 KiB, e-mails (kept)",
                            open(chain, regex, "openshell/regex", regexConfig), mail),
                    new Case("loopback gRPC Privacy Guard, 2 KiB, e-mails redacted",
                            open(chain, pg, "examples/privacy-guard", JsonObject.EMPTY_JSON_OBJECT), mail));
            long[] seq = new long[cases.size()];
            for (int i = 0; i < cases.size(); i++) {
                for (int j = 0; j < 3000; j++) {
                    cases.get(i).session().message(Phase.PRE_CREDENTIALS, ++seq[i], cases.get(i).text());
                }
            }
            List<List<Long>> samples = new ArrayList<>();
            cases.forEach(c -> samples.add(new ArrayList<>()));
            for (int r = 0; r < rounds; r++) {
                for (int i = 0; i < cases.size(); i++) {
                    for (int j = 0; j < 300; j++) {
                        long t0 = System.nanoTime();
                        cases.get(i).session().message(Phase.PRE_CREDENTIALS, ++seq[i], cases.get(i).text());
                        samples.get(i).add(System.nanoTime() - t0);
                    }
                }
            }
            System.out.printf("%-55s %7s %9s %9s %9s%n", "case (one stage, per message)", "n", "p50 us", "p99 us",
                    "mean us");
            for (int i = 0; i < cases.size(); i++) {
                long[] s = samples.get(i).stream().mapToLong(Long::longValue).sorted().toArray();
                System.out.printf("%-55s %7d %9.1f %9.1f %9.1f%n", cases.get(i).name(), s.length,
                        s[(int) (s.length * 0.50)] / 1e3, s[(int) (s.length * 0.99)] / 1e3,
                        Arrays.stream(s).average().orElse(0) / 1e3);
                cases.get(i).session().end(SessionEndReason.NORMAL);
            }
        }
    }

    static MessageChain.Session open(MessageChain chain, MiddlewareProvider p, String id, JsonObject config) {
        StageSpec spec = new StageSpec("bench", new BindingId(id), p, Provenance.BUILT_IN, 10, OnError.FAIL_CLOSED,
                0, 5000, config, h -> true);
        MessageChain.Opening o = chain.open(List.of(new MessageChain.Member(spec, Phase.PRE_CREDENTIALS)),
                m -> new WebSocketPreflight(m.spec().bindingId(), "bench", m.phase(), RequestContext.of("bench"),
                        m.spec().config(), new HttpRequestTarget("https", "api.openai.com", 443, "GET",
                        "/v1/realtime", ""), List.of()));
        if (!(o instanceof MessageChain.Opened opened) || !opened.session().inspects(Phase.PRE_CREDENTIALS)) {
            throw new IllegalStateException("the stage did not open: " + o.events());
        }
        return opened.session();
    }
}
