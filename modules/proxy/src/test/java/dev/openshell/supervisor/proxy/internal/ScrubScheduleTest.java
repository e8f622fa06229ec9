package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * What a scrubbed stream releases, and when, does not depend on the secret's value (attacker pass finding 12: a hold
 * that depended on whether reflected text could start the secret was a prefix oracle). For two different secrets of
 * the same length (so their searched forms have the same lengths), the same upstream text, cut into the same reads,
 * with the upstream going silent at the same points, gives the same sequence of released sizes after each read, on
 * each path: the body's byte stream ({@link SecretScrubber.Scrubbing}), server-sent events ({@link EventSplits}) and
 * WebSocket server messages ({@link ScrubbedMessages}). The text is built from prefixes of either secret (and of the
 * first one's base64), which the old hold answered differently; runs where a whole value was found (then the
 * placeholder is sent, as it must be) are discarded.
 */
class ScrubScheduleTest {
    private static final String PLACEHOLDER = "openshell:resolve:env:KEY";

    @Provide
    Arbitrary<List<String>> secretPairs() {
        return Arbitraries.integers().between(6, 32).flatMap(n -> Arbitraries.strings().withCharRange('a', 'z')
                .withCharRange('A', 'Z').withCharRange('0', '9').ofLength(n).list().ofSize(2)
                .filter(l -> !l.get(0).equals(l.get(1))));
    }

    /** {@return one segment of reflected text: a proper prefix of a secret or of a form, or other text} */
    private static String segment(List<String> secrets, int kind, int len) {
        String a = secrets.get(0);
        String b64 = Base64.getEncoder().withoutPadding().encodeToString(a.getBytes(StandardCharsets.UTF_8));
        return switch (kind) {
            case 0 -> a.substring(0, Math.min(len, a.length() - 1));
            case 1 -> secrets.get(1).substring(0, Math.min(len, a.length() - 1));
            case 2 -> b64.substring(0, Math.min(len, b64.length() - 1));
            case 3 -> " ";
            default -> "x".repeat(len % 9) + "-";
        };
    }

    /** Writes {@code in} in reads of the given sizes; {@return the bytes out after each read (and silence)} */
    private static List<Integer> run(byte[] in, List<Integer> cuts, List<Boolean> silences,
                                     ByteArrayOutputStream out, Step write, Step silent, Step end) throws IOException {
        List<Integer> sizes = new ArrayList<>();
        int at = 0;
        for (int i = 0; at < in.length; i++) {
            int n = Math.min(in.length - at, i < cuts.size() ? cuts.get(i) : in.length);
            write.run(at, n);
            at += n;
            sizes.add(out.size());
            if (i < silences.size() && silences.get(i)) {
                silent.run(0, 0);
                sizes.add(out.size());
            }
        }
        end.run(0, 0);
        sizes.add(out.size());
        return sizes;
    }

    /** One step of a run. */
    private interface Step {
        void run(int off, int n) throws IOException;
    }

    @Property(tries = 300)
    void theBodyStreamsScheduleDoesNotDependOnTheSecret(
            @ForAll("secretPairs") List<String> secrets,
            @ForAll @Size(max = 30) List<@IntRange(min = 0, max = 4) Integer> kinds,
            @ForAll @Size(max = 30) List<@IntRange(min = 1, max = 40) Integer> lens,
            @ForAll @Size(max = 20) List<@IntRange(min = 1, max = 60) Integer> cuts,
            @ForAll @Size(max = 20) List<Boolean> silences) throws IOException {
        StringBuilder text = new StringBuilder("reply: ");
        for (int i = 0; i < kinds.size(); i++) {
            text.append(segment(secrets, kinds.get(i), i < lens.size() ? lens.get(i) : 3));
        }
        byte[] in = text.toString().getBytes(StandardCharsets.UTF_8);
        List<List<Integer>> schedules = new ArrayList<>();
        for (String secret : secrets) {
            SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            SecretScrubber.Scrubbing scrubbing = s.scrubbing(out);
            schedules.add(run(in, cuts, silences, out, (off, n) -> scrubbing.write(in, off, n),
                    (off, n) -> scrubbing.finish(), (off, n) -> scrubbing.finish()));
            Assume.that(s.matches() == 0);
        }
        assertEquals(schedules.get(0), schedules.get(1), text.toString());
    }

    /** {@return one event carrying {@code text}: raw data, a JSON delta with a repeated id, or a comment} */
    private static String event(int shape, String text) {
        return switch (shape) {
            case 0 -> "data: " + text + "\n\n";
            case 1 -> "data: {\"id\":\"c-1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text
                    + "\"}}]}\n\n";
            default -> ": " + text + "\n\n";
        };
    }

    @Property(tries = 300)
    void theEventStreamsScheduleDoesNotDependOnTheSecret(
            @ForAll("secretPairs") List<String> secrets,
            @ForAll @Size(max = 30) List<@IntRange(min = 0, max = 4) Integer> kinds,
            @ForAll @Size(max = 30) List<@IntRange(min = 0, max = 2) Integer> shapes,
            @ForAll @Size(max = 30) List<@IntRange(min = 1, max = 40) Integer> lens,
            @ForAll @Size(max = 20) List<@IntRange(min = 1, max = 120) Integer> cuts,
            @ForAll @Size(max = 20) List<Boolean> silences) throws IOException {
        StringBuilder sse = new StringBuilder();
        for (int i = 0; i < kinds.size(); i++) {
            sse.append(event(i < shapes.size() ? shapes.get(i) : 0,
                    segment(secrets, kinds.get(i), i < lens.size() ? lens.get(i) : 3)));
        }
        byte[] in = sse.toString().getBytes(StandardCharsets.UTF_8);
        List<List<Integer>> schedules = new ArrayList<>();
        for (String secret : secrets) {
            SecretScrubber s = new SecretScrubber(Map.of(secret, PLACEHOLDER));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            EventSplits events = new EventSplits(s, out);
            SecretScrubber.Scrubbing scrubbing = s.scrubbing(events);
            schedules.add(run(in, cuts, silences, out, (off, n) -> scrubbing.write(in, off, n), (off, n) -> {
                scrubbing.finish();
                events.release();
            }, (off, n) -> {
                scrubbing.finish();
                events.finish();
            }));
            Assume.that(s.matches() == 0);
        }
        assertEquals(schedules.get(0), schedules.get(1), sse.toString());
    }

    private static ResponseScrub scrub(String secret, List<ExchangeRecord> records) {
        ProxyRequest req = new ProxyRequest("r1", new HttpRequestTarget("http", "h.test", 80, "GET", "/", ""),
                List.<HttpHeader>of(), Set.of(), EndpointFacts.of("p"), OptionalLong.empty(), false, true);
        return new ResponseScrub(req, InjectedCredentials.of(List.of(new InjectedCredentials.Entry("KEY", secret,
                PLACEHOLDER, false))), records::add);
    }

    private static int size(MessageRelay.Delivery d) {
        return d.frames().stream().mapToInt(f -> f.length).sum();
    }

    @Property(tries = 300)
    void theWebSocketMessagesScheduleDoesNotDependOnTheSecret(
            @ForAll("secretPairs") List<String> secrets,
            @ForAll @Size(max = 40) List<@IntRange(min = 0, max = 4) Integer> kinds,
            @ForAll @Size(max = 40) List<@IntRange(min = 0, max = 1) Integer> shapes,
            @ForAll @Size(max = 40) List<@IntRange(min = 1, max = 40) Integer> lens,
            @ForAll @Size(max = 40) List<Boolean> silences) {
        List<List<Integer>> schedules = new ArrayList<>();
        for (String secret : secrets) {
            List<ExchangeRecord> records = new ArrayList<>();
            ScrubbedMessages scrubbed = new ScrubbedMessages(scrub(secret, records), null);
            List<Integer> sizes = new ArrayList<>();
            for (int i = 0; i < kinds.size(); i++) {
                String part = segment(secrets, kinds.get(i), i < lens.size() ? lens.get(i) : 3);
                String text = i < shapes.size() && shapes.get(i) == 1 ? "{\"type\":\"delta\",\"delta\":\"" + part
                        + "\"}" : part;
                byte[] payload = text.getBytes(StandardCharsets.UTF_8);
                byte[] frame = ScrubbedMessagesPropertyTest.frame(0x81, payload);
                sizes.add(size(scrubbed.message(1, payload, List.of(frame))));
                if (i < silences.size() && silences.get(i)) {
                    sizes.add(size(scrubbed.drain())); // the upstream went silent
                }
            }
            sizes.add(size(scrubbed.drain())); // the server's close frame
            Assume.that(records.isEmpty());
            schedules.add(sizes);
        }
        assertEquals(schedules.get(0), schedules.get(1));
    }
}
