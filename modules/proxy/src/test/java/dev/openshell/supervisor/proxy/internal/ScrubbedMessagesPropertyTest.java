package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.supervisor.proxy.EndpointFacts;
import dev.openshell.supervisor.proxy.ExchangeRecord;
import dev.openshell.supervisor.proxy.InjectedCredentials;
import dev.openshell.supervisor.proxy.ProxyRequest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;

/**
 * A server message holding a secret, cut into fragments at arbitrary points (control frames between them), reaches
 * the client scrubbed whole, whatever the cuts ({@link MessageRelay} with {@link ScrubbedMessages}); every other
 * frame is relayed unchanged, and the matches are reported.
 */
class ScrubbedMessagesPropertyTest {
    static final String SECRET = "sk-prop/secret+value-0123456789";
    static final String PLACEHOLDER = "openshell:resolve:env:KEY";

    static ResponseScrub scrub(List<ExchangeRecord> records) {
        ProxyRequest req = new ProxyRequest("r1", new HttpRequestTarget("http", "h.test", 80, "GET", "/", ""),
                List.<HttpHeader>of(), Set.of(), EndpointFacts.of("p"), OptionalLong.empty(), false, true);
        return new ResponseScrub(req, InjectedCredentials.of(List.of(new InjectedCredentials.Entry("KEY", SECRET,
                PLACEHOLDER, false))), records::add);
    }

    static byte[] frame(int b0, byte[] p) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(b0);
        if (p.length < 126) {
            out.write(p.length);
        } else {
            out.write(126);
            out.write(p.length >> 8);
            out.write(p.length);
        }
        out.writeBytes(p);
        return out.toByteArray();
    }

    /** One frame as the client reads it. */
    record Read(int b0, byte[] payload) {
    }

    static List<Read> frames(byte[] bytes) throws IOException {
        InputStream in = new ByteArrayInputStream(bytes);
        List<Read> out = new ArrayList<>();
        int b0;
        while ((b0 = in.read()) >= 0) {
            int len = in.read();
            if (len == 126) {
                len = (in.read() << 8) | in.read();
            }
            out.add(new Read(b0, in.readNBytes(len)));
        }
        return out;
    }

    @Property(tries = 300)
    void aSecretIsScrubbedWhateverTheFragmentation(@ForAll @AlphaChars @StringLength(max = 40) String before,
                                                  @ForAll @AlphaChars @StringLength(max = 40) String after,
                                                  @ForAll @Size(max = 6) List<@IntRange(min = 0, max = 200) Integer> cuts,
                                                  @ForAll boolean binary, @ForAll boolean pings) throws IOException {
        byte[] message = (before + SECRET + after).getBytes(StandardCharsets.UTF_8);
        TreeSet<Integer> points = new TreeSet<>();
        for (int c : cuts) {
            points.add(Math.min(c, message.length));
        }
        points.add(message.length);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        int from = 0;
        boolean first = true;
        for (int to : points) {
            boolean last = to == message.length;
            int op = first ? (binary ? 2 : 1) : 0;
            byte[] part = java.util.Arrays.copyOfRange(message, from, to);
            wire.writeBytes(frame((last ? 0x80 : 0) | op, part));
            if (pings && !last) {
                wire.writeBytes(frame(0x89, "ping".getBytes(StandardCharsets.UTF_8)));
            }
            first = false;
            from = to;
        }
        wire.writeBytes(frame(0x81, "after".getBytes(StandardCharsets.UTF_8)));
        wire.writeBytes(frame(0x88, new byte[] {3, (byte) 0xE8}));
        List<ExchangeRecord> records = new ArrayList<>();
        ByteArrayOutputStream client = new ByteArrayOutputStream();
        WebSocketFrames.Ended ended = MessageRelay.relay(new ByteArrayInputStream(wire.toByteArray()), client, false,
                new ScrubbedMessages(scrub(records), null));
        assertEquals(0, ended.closeStatus(), ended.reason());
        List<Read> got = frames(client.toByteArray());
        List<Read> data = got.stream().filter(f -> (f.b0() & 0x0F) < 8).toList();
        assertEquals(2, data.size(), "the scrubbed message is one frame, then the clean one");
        assertEquals(0x80 | (binary ? 2 : 1), data.get(0).b0());
        String text = new String(data.get(0).payload(), StandardCharsets.UTF_8);
        assertFalse(text.contains(SECRET));
        assertEquals(new String(message, StandardCharsets.UTF_8).replace(SECRET, PLACEHOLDER), text);
        assertEquals("after", new String(data.get(1).payload(), StandardCharsets.UTF_8));
        assertEquals(pings ? points.size() - 1 : 0, got.stream().filter(f -> f.b0() == 0x89).count());
        assertEquals(1, records.size());
        ExchangeRecord.ResponseScrubbed r = (ExchangeRecord.ResponseScrubbed) records.get(0);
        assertEquals(Set.of("KEY"), r.credentials());
        assertEquals(0, r.headerMatches());
    }
}
