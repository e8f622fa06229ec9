package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.HttpHeader;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * The escape-and-markup search made in the run finder's windows ({@link EscapeSearch}, {@link SecretScanner#scanSearching})
 * finds what the separate pass ({@link BodyDecoder#escapedOrMarkedUp}) finds, on bodies with backslashes, {@code &}
 * and {@code <} (valid and invalid escapes, {@code &#}, {@code &&}, CDATA openings whole and cut, non-ASCII bytes whose
 * low seven bits are one of the three) at every offset, across 8-byte word edges and at the body's end; and the scan of a
 * body through the deferred view gives the same findings and the same edits as the scan of the view decoded first.
 */
class EscapeSearchPropertyTest {
    private static final List<String> SAMPLES = CatalogSamples.ALL.stream().map(CatalogSamples.Sample::text).toList();
    private static final List<String> MARKERS = List.of("\\", "\\n", "\\\"", "\\\\", "\\/", "\\u0073", "\\u00",
            "\\uZZZZ", "\\q", "\\x41", "&", "&&", "&#", "&#115;", "&#x73;", "&amp;", "<", "<<", "<![CDATA[", "<![CDAT",
            "<!", "<b>", "&lt;", "\u00dc", "\u0726", "\u00a6", "\u00bc");
    private static final List<String> FILLERS = List.of(" ", "\n", "-", "--", "=", ": ", "\"", "'", ",", "(", ")", ";",
            "PATH=/usr/local/bin:$PATH;", "~/projects/patterns", "load_settings", "claude-sonnet", "test-all", "-j2",
            "config.get('timeout',", "xoxb-", "ghp_", "Bearer ", "api_key = \"", "é", "\u0000");
    private static final List<Selection> SELECTIONS = List.of(Selection.defaults(), Selection.everything(),
            Selection.of(List.of(Catalog.get().rules().stream()
                    .min(Comparator.comparingInt(EscapeSearchPropertyTest::shortest)).orElseThrow())));

    private static int shortest(Rule r) {
        return r.forms().stream().filter(f -> f.shape() != null).mapToInt(f -> f.shape().minLength()).min().orElse(Integer.MAX_VALUE);
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        Arbitrary<String> word = Arbitraries.strings().withCharRange('a', 'z').withCharRange('A', 'Z')
                .withCharRange('0', '9').withChars("_-./+=~:$%@!\\&<#").ofMinLength(1).ofMaxLength(30);
        Arbitrary<String> piece = Arbitraries.frequencyOf(
                Tuple.of(2, Arbitraries.of(SAMPLES)),
                Tuple.of(5, Arbitraries.of(MARKERS)),
                Tuple.of(5, Arbitraries.of(FILLERS)),
                Tuple.of(5, word),
                Tuple.of(1, Arbitraries.strings().ascii().ofMaxLength(12)));
        Arbitrary<byte[]> raw = Arbitraries.bytes().array(byte[].class).ofMaxSize(24);
        return Arbitraries.frequencyOf(
                Tuple.of(4, piece.list().ofMaxSize(30).map(l -> utf8(String.join("", l)))),
                Tuple.of(1, raw));
    }

    @Provide
    Arbitrary<String> markers() {
        return Arbitraries.of(MARKERS);
    }

    /** The fused search's flags equal the separate pass's, and every position was tested. */
    @Property(tries = 1500)
    void theFusedSearchFindsWhatThePassFinds(@ForAll("bodies") byte[] body) {
        assertSame(body);
    }

    /** One marker at every offset of a body of token characters or spaces, up to its last byte. */
    @Property(tries = 400)
    void aMarkerAtEveryOffset(@ForAll("markers") String marker, @ForAll @IntRange(max = 40) int length,
                              @ForAll boolean spaces) {
        byte[] m = utf8(marker);
        for (int at = 0; at <= length; at++) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            for (int i = 0; i < at; i++) {
                out.write(spaces && i % 5 == 4 ? ' ' : 'a' + i % 26);
            }
            out.writeBytes(m);
            for (int i = at; i < length; i++) {
                out.write(spaces && i % 5 == 4 ? ' ' : 'k' + i % 13);
            }
            assertSame(out.toByteArray());
        }
    }

    /** The scan through the deferred view gives the findings and edits of the scan of the view decoded first. */
    @Property(tries = 800)
    void theDeferredScanEqualsTheDecodedOne(@ForAll("bodies") byte[] body) throws Undecodable {
        for (String type : List.of("text/plain", "text/plain; charset=iso-8859-1", "application/octet-stream")) {
            List<HttpHeader> headers = List.of(new HttpHeader("content-type", type));
            TextView eager;
            try {
                eager = BodyDecoder.decode(headers, ByteBuffer.wrap(body).asReadOnlyBuffer());
            } catch (Undecodable e) {
                assertThrows(Undecodable.class,
                        () -> BodyDecoder.decodeDeferring(headers, ByteBuffer.wrap(body).asReadOnlyBuffer()));
                continue;
            }
            Scan expected = SecretScanner.scan(eager.text(), Selection.everything(), true);
            TextView view = BodyDecoder.decodeDeferring(headers, ByteBuffer.wrap(body).asReadOnlyBuffer());
            Scan scan = null;
            if (view instanceof BodyDecoder.Deferred deferred) {
                scan = SecretScanner.scanSearching(view.text(), Selection.everything(), true, new EscapeSearch(),
                        true);
                view = scan != null ? deferred.plain() : deferred.resolve();
            }
            if (scan == null) {
                scan = SecretScanner.scan(view.text(), Selection.everything(), true);
            }
            assertArrayEquals(expected.counts(), scan.counts());
            assertArrayEquals(expected.unverified(), scan.unverified());
            assertArrayEquals(Arrays.copyOf(expected.spans(), expected.spanInts()),
                    Arrays.copyOf(scan.spans(), scan.spanInts()));
            assertEquals(described(eager.toInput(expected.edits())), described(view.toInput(scan.edits())));
            assertEquals(eager.twoReadings(), view.twoReadings());
        }
    }

    private static void assertSame(byte[] body) {
        int expected = BodyDecoder.escapedOrMarkedUp(ByteBuffer.wrap(body));
        for (Selection selection : SELECTIONS) {
            ByteBuffer text = ByteBuffer.wrap(body).asReadOnlyBuffer();
            EscapeSearch search = new EscapeSearch();
            Scan scan = SecretScanner.scanSearching(text, selection, true, search, false);
            assertNotNull(scan);
            assertEquals(expected, search.holds(), () -> Arrays.toString(body));
            assertTrue(search.checked() >= body.length);
            Scan cut = SecretScanner.scanSearching(text, selection, true, new EscapeSearch(), true);
            if (expected == 0) {
                Scan plain = SecretScanner.scan(text, selection, true);
                assertNotNull(cut);
                assertArrayEquals(plain.counts(), cut.counts());
                assertArrayEquals(Arrays.copyOf(plain.spans(), plain.spanInts()),
                        Arrays.copyOf(cut.spans(), cut.spanInts()));
            } else {
                assertNull(cut);
            }
        }
    }

    private static List<String> described(List<Edit> edits) {
        return edits.stream().map(e -> e.start() + "-" + e.end() + ":" + Arrays.toString(e.replacement())).toList();
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
