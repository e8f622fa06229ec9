package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.proxy.ExchangeRecord;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.AlphaChars;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

/**
 * A secret split across server WebSocket messages ({@link MessageRelay} with {@link ScrubbedMessages}): whatever the
 * split points, the number of messages, their fragmentation and the control frames between them, a client joining
 * the messages' text (raw, or a JSON field streamed as deltas) never reads the secret; every message arrives, and
 * holding is bounded (closed and recorded as uninspectable at the bound).
 */
class ScrubbedMessagesSplitTest {
    private static final String SECRET = ScrubbedMessagesPropertyTest.SECRET;
    private static final String PLACEHOLDER = ScrubbedMessagesPropertyTest.PLACEHOLDER;
    private static final Pattern DELTA = Pattern.compile("\"delta\":\"([^\"]*)\"");

    private static ResponseScrub scrub(List<ExchangeRecord> records) {
        return ScrubbedMessagesPropertyTest.scrub(records);
    }

    private static byte[] frame(int b0, byte[] p) {
        return ScrubbedMessagesPropertyTest.frame(b0, p);
    }

    private static byte[] text(String s) {
        return frame(0x81, s.getBytes(StandardCharsets.UTF_8));
    }

    private static final byte[] CLOSE = frame(0x88, new byte[] {3, (byte) 0xE8});

    /** {@return the data messages' payloads as the client reads them, and the pings, in order} */
    private static List<String> read(byte[] client) throws IOException {
        List<String> out = new ArrayList<>();
        ByteArrayOutputStream message = new ByteArrayOutputStream();
        for (ScrubbedMessagesPropertyTest.Read f : ScrubbedMessagesPropertyTest.frames(client)) {
            int op = f.b0() & 0x0F;
            if (op == 9) {
                out.add("<ping>");
            } else if (op < 8) {
                message.writeBytes(f.payload());
                if ((f.b0() & 0x80) != 0) {
                    out.add(message.toString(StandardCharsets.UTF_8));
                    message.reset();
                }
            }
        }
        return out;
    }

    private static long matches(List<ExchangeRecord> records) {
        return records.stream().filter(r -> r instanceof ExchangeRecord.ResponseScrubbed)
                .mapToLong(r -> ((ExchangeRecord.ResponseScrubbed) r).bodyMatches()).sum();
    }

    @Property(tries = 400)
    void aSecretSplitAcrossAnyNumberOfMessagesIsScrubbed(
            @ForAll @AlphaChars @StringLength(max = 20) String before,
            @ForAll @AlphaChars @StringLength(max = 20) String after,
            @ForAll @Size(min = 1, max = 6) List<@IntRange(min = 1, max = 30) Integer> cuts,
            @ForAll boolean json, @ForAll boolean fragmented, @ForAll boolean pings) throws IOException {
        TreeSet<Integer> points = new TreeSet<>(cuts);
        points.add(SECRET.length());
        List<String> parts = new ArrayList<>();
        int from = 0;
        for (int to : points) {
            parts.add(SECRET.substring(from, to));
            from = to;
        }
        parts.set(0, before + parts.get(0));
        parts.set(parts.size() - 1, parts.get(parts.size() - 1) + after);
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        for (String part : parts) {
            String m = json ? "{\"type\":\"response.text.delta\",\"delta\":\"" + part + "\"}" : part;
            byte[] b = m.getBytes(StandardCharsets.UTF_8);
            if (fragmented && b.length > 1) {
                wire.writeBytes(frame(0x01, Arrays.copyOf(b, b.length / 2)));
                wire.writeBytes(frame(0x80, Arrays.copyOfRange(b, b.length / 2, b.length)));
            } else {
                wire.writeBytes(frame(0x81, b));
            }
            if (pings) {
                wire.writeBytes(frame(0x89, "p".getBytes(StandardCharsets.UTF_8)));
            }
        }
        wire.writeBytes(text("done"));
        wire.writeBytes(CLOSE);
        List<ExchangeRecord> records = new ArrayList<>();
        ByteArrayOutputStream client = new ByteArrayOutputStream();
        WebSocketFrames.Ended ended = MessageRelay.relay(new ByteArrayInputStream(wire.toByteArray()), client, false,
                new ScrubbedMessages(scrub(records), null));
        assertEquals(0, ended.closeStatus(), ended.reason());
        List<String> got = read(client.toByteArray());
        List<String> data = got.stream().filter(m -> !m.equals("<ping>")).toList();
        assertEquals(parts.size() + 1, data.size(), "every message arrives");
        assertEquals(pings ? parts.size() : 0, got.size() - data.size(), "every ping arrives");
        StringBuilder joined = new StringBuilder();
        for (String m : data) {
            Matcher d = DELTA.matcher(m);
            joined.append(json && d.find() ? d.group(1) : m);
        }
        assertFalse(joined.toString().contains(SECRET), joined.toString());
        assertEquals(before + PLACEHOLDER + after + "done", joined.toString());
        assertTrue(matches(records) >= 1, "the replacement is recorded");
    }

    /**
     * Messages repeating a JSON key (attacker pass 2, finding N1) are joined as a client's parser reads them, the last
     * occurrence being the member, at every level: the value split across the last occurrences is replaced, and the
     * earlier occurrences neither join it nor come between its parts.
     */
    @Test
    void aSecretSplitAcrossMessagesThatRepeatAJsonKeyIsScrubbedAsTheParserReadsIt() throws IOException {
        for (String template : List.of("{\"type\":\"t\",\"delta\":\"AAA\",\"delta\":\"%s\"}",
                "{\"item\":{\"delta\":\"AAA\"},\"item\":{\"delta\":{\"x\":\"B\"},\"delta\":\"%s\"}}")) {
            ByteArrayOutputStream wire = new ByteArrayOutputStream();
            List<String> parts = List.of(SECRET.substring(0, 3), SECRET.substring(3, 7), SECRET.substring(7));
            for (String part : parts) {
                wire.writeBytes(text(template.replace("%s", part)));
            }
            wire.writeBytes(CLOSE);
            List<ExchangeRecord> records = new ArrayList<>();
            ByteArrayOutputStream client = new ByteArrayOutputStream();
            WebSocketFrames.Ended ended = MessageRelay.relay(new ByteArrayInputStream(wire.toByteArray()), client,
                    false, new ScrubbedMessages(scrub(records), null));
            assertEquals(0, ended.closeStatus(), ended.reason());
            StringBuilder joined = new StringBuilder();
            for (String m : read(client.toByteArray())) {
                Object v = EventDuplicateKeysTest.Json.parse(m, true);
                joined.append(template.startsWith("{\"type") ? EventDuplicateKeysTest.at(v, "delta")
                        : EventDuplicateKeysTest.at(v, "item", "delta"));
            }
            assertEquals(PLACEHOLDER, joined.toString(), template);
            assertTrue(matches(records) >= 1, "the replacement is recorded");
        }
    }

    /**
     * A message is held until the window of its text follows it, whether or not it could start the secret (attacker
     * pass finding 12); pings are never held.
     */
    @Test
    void aMessageIsHeldUntilTheWindowFollowsWhateverItSaysAndPingsGoOn() throws IOException {
        for (String first : List.of("hello sk-pr", "hello world")) {
            List<ExchangeRecord> records = new ArrayList<>();
            ScrubbedMessages scrubbed = new ScrubbedMessages(scrub(records), null);
            int w = scrubbed.joined.window();
            ByteArrayOutputStream wire = new ByteArrayOutputStream();
            wire.writeBytes(text(first));
            wire.writeBytes(frame(0x89, "p".getBytes(StandardCharsets.UTF_8)));
            wire.writeBytes(text("o".repeat(w)));
            wire.writeBytes(CLOSE);
            ByteArrayOutputStream client = new ByteArrayOutputStream();
            MessageRelay.relay(new ByteArrayInputStream(wire.toByteArray()), client, false, scrubbed);
            assertEquals(List.of("<ping>", first, "o".repeat(w)), read(client.toByteArray()),
                    "the ping passes the held message; it goes unchanged once the window follows it");
            assertEquals(List.of(), records);
        }
    }

    @Test
    void heldMessagesGoBeforeTheServersCloseFrame() throws IOException {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.writeBytes(text("sk-pr"));
        wire.writeBytes(CLOSE);
        ByteArrayOutputStream client = new ByteArrayOutputStream();
        WebSocketFrames.Ended ended = MessageRelay.relay(new ByteArrayInputStream(wire.toByteArray()), client, false,
                new ScrubbedMessages(scrub(new ArrayList<>()), null));
        assertEquals(0, ended.closeStatus());
        byte[] expected = new byte[text("sk-pr").length + CLOSE.length];
        System.arraycopy(text("sk-pr"), 0, expected, 0, text("sk-pr").length);
        System.arraycopy(CLOSE, 0, expected, text("sk-pr").length, CLOSE.length);
        assertTrue(Arrays.equals(expected, client.toByteArray()), "the original frames, then the close frame");
    }

    /** Relays {@code wire}, then a read timeout (the upstream's idle limit), through a fresh scrub. */
    private static WebSocketFrames.Ended relayThenIdle(byte[] wire, List<ExchangeRecord> records,
                                                     ByteArrayOutputStream client) throws IOException {
        InputStream idle = new InputStream() {
            @Override
            public int read() throws IOException {
                throw new UpstreamIOException(new SocketTimeoutException("idle")); // as the upstream socket's
            }
        };
        ScrubbedMessages scrubbed = new ScrubbedMessages(scrub(records), null);
        WebSocketFrames.Ended ended = MessageRelay.relay(new SequenceInputStream(new ByteArrayInputStream(wire), idle),
                client, false, scrubbed);
        scrubbed.ended(ended);
        return ended;
    }

    @Test
    void anUpstreamIdleWhileAMessageIsHeldIsClosedAndRecorded() throws IOException {
        List<ExchangeRecord> records = new ArrayList<>();
        ByteArrayOutputStream client = new ByteArrayOutputStream();
        WebSocketFrames.Ended ended = relayThenIdle(text("x sk-prop/sec"), records, client);
        assertEquals(WebSocketFrames.POLICY_VIOLATION, ended.closeStatus());
        assertEquals(0, client.size(), "the held message is not delivered");
        assertEquals(1, records.size());
        assertEquals(ScrubbingRelay.UNINSPECTABLE, ((ExchangeRecord.ResponseUninspectable) records.get(0)).code());
    }

    @Test
    void anUpstreamIdleWithNothingHeldIsAFailedConnection() {
        org.junit.jupiter.api.Assertions.assertThrows(UpstreamIOException.class,
                () -> relayThenIdle(frame(0x89, new byte[0]), new ArrayList<>(), new ByteArrayOutputStream()));
    }

    /** Relays {@code wire} to {@code client} through {@code scrubbed}, then tells it the end: {@return that end} */
    private static WebSocketFrames.Ended relayToEnd(byte[] wire, ByteArrayOutputStream client,
                                                    ScrubbedMessages scrubbed) throws IOException {
        WebSocketFrames.Ended ended = MessageRelay.relay(new ByteArrayInputStream(wire), client, false, scrubbed);
        scrubbed.ended(ended);
        return ended;
    }

    /** A message whose text nothing follows goes once {@value ScrubbedMessages#AFTER_MESSAGES} messages follow it. */
    @Test
    void manyMessagesAfterAHeldOneReleaseItAtLinearCost() throws IOException {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        wire.writeBytes(text("sk-"));
        for (int i = 0; i < ScrubbedMessages.MAX_HELD_MESSAGES; i++) {
            wire.writeBytes(frame(0x82, new byte[0])); // no text: they do not release it by their text
        }
        List<ExchangeRecord> records = new ArrayList<>();
        ByteArrayOutputStream client = new ByteArrayOutputStream();
        ScrubbedMessages scrubbed = new ScrubbedMessages(scrub(records), null);
        WebSocketFrames.Ended ended = relayToEnd(wire.toByteArray(), client, scrubbed);
        assertEquals(0, ended.closeStatus(), ended.reason());
        assertEquals(wire.size(), client.size(), "every message arrives, unchanged");
        assertEquals(List.of(), records);
        assertTrue(scrubbed.joined.work <= 4L * wire.size(), "work " + scrubbed.joined.work);
    }

    @Test
    void moreHeldBytesThanTheBoundAreClosedWith1009AndRecorded() throws IOException {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        // 3 MiB of one field, then 1.5 MiB of another: less than half the bound follows the first and none of its
        // field's text, so both are held: past 4 MiB
        String[] fields = {"a", "b"};
        int[] sizes = {3 << 20, 3 << 19};
        for (int m = 0; m < 2; m++) {
            byte[] big = ("{\"" + fields[m] + "\":\"" + "x".repeat(sizes[m]) + "\"}").getBytes(StandardCharsets.UTF_8);
            ByteArrayOutputStream f = new ByteArrayOutputStream();
            f.write(0x81);
            f.write(127);
            f.writeBytes(new byte[] {0, 0, 0, 0, (byte) (big.length >>> 24), (byte) (big.length >>> 16),
                (byte) (big.length >>> 8), (byte) big.length});
            f.writeBytes(big);
            wire.writeBytes(f.toByteArray());
        }
        List<ExchangeRecord> records = new ArrayList<>();
        ByteArrayOutputStream client = new ByteArrayOutputStream();
        ScrubbedMessages scrubbed = new ScrubbedMessages(scrub(records), null);
        WebSocketFrames.Ended ended = relayToEnd(wire.toByteArray(), client, scrubbed);
        assertEquals(WebSocketFrames.TOO_BIG, ended.closeStatus());
        assertEquals(0, client.size());
        assertEquals(1, records.size(), "recorded once");
    }
}
