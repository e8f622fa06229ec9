package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link HttpInput#headBuffered()} is what lets the session skip the head deadline: when it says a head is buffered,
 * parsing the head never reads the source again (so it cannot block), whatever the bytes.
 */
class HeadBufferedPropertyTest {
    /** Hands out {@code bytes} on the first read; any later read is a failure of the property. */
    private static final class OneRead extends InputStream {
        private final byte[] bytes;
        private boolean given;

        OneRead(byte[] bytes) {
            this.bytes = bytes;
        }

        @Override
        public int read() {
            throw new AssertionError("read again");
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (given) {
                throw new AssertionError("the head parser read the source again: it could have blocked");
            }
            given = true;
            System.arraycopy(bytes, 0, b, off, bytes.length);
            return bytes.length;
        }
    }

    @Provide
    Arbitrary<String> heads() {
        Arbitrary<String> line = Arbitraries.oneOf(Arbitraries.of("GET http://a.test/ HTTP/1.1", "Host: a.test",
                        "X: y", "", " folded", "bad line", "GET / HTTP/1.1"),
                Arbitraries.strings().withChars("AZaz09 :\t\r\n/.").ofMaxLength(40));
        Arbitrary<String> ending = Arbitraries.of("\r\n", "\n", "\r", "");
        return line.list().ofMaxSize(8).flatMap(lines -> ending.list().ofSize(lines.size()).map(ends -> {
            StringBuilder b = new StringBuilder();
            for (int i = 0; i < lines.size(); i++) {
                b.append(lines.get(i)).append(ends.get(i));
            }
            return b.toString();
        }));
    }

    @Property(tries = 3000)
    void aBufferedHeadIsParsedWithoutAnotherRead(@ForAll("heads") String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        if (bytes.length == 0) {
            return;
        }
        HttpInput in = new HttpInput(new OneRead(bytes));
        assertTrue(in.awaitData());
        if (!in.headBuffered()) {
            return;
        }
        try {
            HeadParser.readRequestHead(in);
        } catch (FramingException e) {
            // a broken rule before the empty line: refused without blocking, as wanted
        }
    }

    @Test
    void aWholeHeadIsBufferedAndAPartOneIsNot() throws IOException, FramingException {
        HttpInput whole = new HttpInput(new OneRead("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"
                .getBytes(StandardCharsets.ISO_8859_1)));
        assertTrue(whole.awaitData());
        assertTrue(whole.headBuffered());
        assertNotNull(HeadParser.readRequestHead(whole));
        HttpInput part = new HttpInput(new OneRead("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n"
                .getBytes(StandardCharsets.ISO_8859_1)));
        assertTrue(part.awaitData());
        assertFalse(part.headBuffered());
        HttpInput leading = new HttpInput(new OneRead("\r\n\r\nGET".getBytes(StandardCharsets.ISO_8859_1)));
        assertTrue(leading.awaitData());
        assertFalse(leading.headBuffered(), "empty lines first: the request line may still be on its way");
    }
}
