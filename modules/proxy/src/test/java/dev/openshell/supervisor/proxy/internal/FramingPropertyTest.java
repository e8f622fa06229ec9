package dev.openshell.supervisor.proxy.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;

/** Properties of the strict parser over large input spaces. */
class FramingPropertyTest {
    private static HttpInput input(String s) {
        return new HttpInput(new ByteArrayInputStream(s.getBytes(StandardCharsets.ISO_8859_1)));
    }

    @Property
    void chunkedRoundTripsAnySplitAndValidExtensions(@ForAll @Size(max = 20) List<@Size(max = 300) byte[]> chunks,
                                                     @ForAll("extension") String ext) throws Exception {
        ByteArrayOutputStream wire = new ByteArrayOutputStream();
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        ByteArrayOutputStream canonical = new ByteArrayOutputStream();
        for (byte[] c : chunks) {
            if (c.length == 0) {
                continue;
            }
            wire.writeBytes((Integer.toHexString(c.length).toUpperCase() + ext + "\r\n").getBytes(StandardCharsets.US_ASCII));
            wire.writeBytes(c);
            wire.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
            canonical.writeBytes((Integer.toHexString(c.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
            canonical.writeBytes(c);
            canonical.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
            expected.writeBytes(c);
        }
        wire.writeBytes(("0" + ext + "\r\nX-Trailer: v\r\n\r\nNEXT").getBytes(StandardCharsets.US_ASCII));
        canonical.writeBytes("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));

        HttpInput in = new HttpInput(new ByteArrayInputStream(wire.toByteArray()));
        ByteArrayOutputStream decoded = new ByteArrayOutputStream();
        assertEquals(expected.size(), new ChunkedDecoder(in).decodeTo(decoded, Long.MAX_VALUE));
        assertArrayEquals(expected.toByteArray(), decoded.toByteArray());
        assertEquals('N', in.read(), "the decoder stops exactly at the end of the message");

        HttpInput again = new HttpInput(new ByteArrayInputStream(wire.toByteArray()));
        ByteArrayOutputStream relayed = new ByteArrayOutputStream();
        new ChunkedDecoder(again).relay(relayed, false);
        assertArrayEquals(canonical.toByteArray(), relayed.toByteArray());
    }

    @Provide
    Arbitrary<String> extension() {
        return Arbitraries.of("", ";a", ";a=b", " ;a=b", ";a = \"q \\\" x\"", ";a;b=1;c", "\t; x=y");
    }

    @Property
    void chunkSizeLinesAcceptOnlyTheGrammar(@ForAll @StringLength(max = 12) String line) {
        boolean valid = line.matches("[0-9A-Fa-f]+([ \\t]*;[ \\t]*[!#$%&'*+.^_`|~0-9A-Za-z-]+([ \\t]*=[ \\t]*"
                + "([!#$%&'*+.^_`|~0-9A-Za-z-]+|\"([\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t\\x20-\\x7e\\x80-\\xff])*\"))?)*");
        boolean overflow = line.replaceFirst("^0+", "").replaceAll("[^0-9A-Fa-f].*", "").length() > 15;
        try {
            ChunkedDecoder.parseSizeLine(line);
            assertEquals(true, valid && !overflow, "accepted: " + line);
        } catch (FramingException e) {
            assertEquals(false, valid && !overflow, "rejected: " + line);
        }
    }

    /** Sizes are judged by their digits, never by a value that may have wrapped (16 or 17 digits read as -1, 0). */
    @Property
    void chunkSizesAreTheirHexValueOrRefused(@ForAll("hexDigits") String digits) {
        java.math.BigInteger value = new java.math.BigInteger(digits, 16);
        try {
            long size = ChunkedDecoder.parseSizeLine(digits);
            assertEquals(true, value.bitLength() <= 60, "accepted " + digits);
            assertEquals(value.longValueExact(), size);
        } catch (FramingException e) {
            assertEquals(true, digits.replaceFirst("^0+", "").length() > ChunkedDecoder.MAX_SIZE_DIGITS,
                    "rejected " + digits);
        }
    }

    @Provide
    Arbitrary<String> hexDigits() {
        return Arbitraries.strings().withChars("0123456789abcdefABCDEF").ofMinLength(1).ofMaxLength(24)
                .edgeCases(c -> c.add("ffffffffffffffff").add("10000000000000000").add("fffffffffffffff"));
    }

    @Property
    void fieldLinesNeverThrowAnythingButFramingErrors(@ForAll @StringLength(min = 1, max = 40) String line) {
        try {
            HeaderField f = HeadParser.parseField(line);
            assertEquals(true, dev.openshell.middleware.spi.internal.Syntax.isToken(f.name()));
            assertEquals(f.value(), HeadParser.trimOws(f.value()));
            assertEquals(true, f.value().chars().noneMatch(c -> (c < 0x20 && c != '\t') || c == 0x7f));
        } catch (FramingException e) {
            assertEquals(400, e.status());
        }
    }

    @Property
    void whitespaceBeforeTheColonIsAlwaysRejected(@ForAll("token") String name, @ForAll("ows") String ws,
                                                  @ForAll @StringLength(max = 20) String value) {
        FramingException e = assertThrows(FramingException.class, () -> HeadParser.parseField(name + ws + ":" + value));
        assertEquals("whitespace_before_colon", e.code());
    }

    @Provide
    Arbitrary<String> token() {
        return Arbitraries.strings().withChars("abcXYZ019-_!#$%&'*+.^`|~").ofMinLength(1).ofMaxLength(12);
    }

    @Provide
    Arbitrary<String> ows() {
        return Arbitraries.strings().withChars(" \t").ofMinLength(1).ofMaxLength(3);
    }

    @Property
    void aBareLfAnywhereInTheHeadIsRejected(@ForAll @IntRange(min = 0, max = 40) int position) throws Exception {
        String head = "GET http://a.example/ HTTP/1.1\r\nHost: a.example\r\nX-A: b\r\n\r\n";
        int crlfs = 0;
        int at = -1;
        for (int i = 0; i < head.length(); i++) {
            if (head.charAt(i) == '\r' && crlfs++ == position % 4) {
                at = i;
                break;
            }
        }
        String broken = head.substring(0, at) + head.substring(at + 1);
        FramingException e = assertThrows(FramingException.class, () -> HeadParser.readRequestHead(input(broken)));
        assertEquals("bare_lf", e.code());
    }

    @Property
    void numericHostSpellingsNormaliseToDottedDecimal(@ForAll @IntRange(min = 0, max = Integer.MAX_VALUE) int high,
                                                      @ForAll boolean top, @ForAll @IntRange(min = 1, max = 4) int parts,
                                                      @ForAll @Size(4) List<@IntRange(min = 0, max = 2) Integer> radix)
            throws Exception {
        long ip = (top ? 0x8000_0000L : 0) | high;
        String dotted = (ip >>> 24) + "." + ((ip >>> 16) & 255) + "." + ((ip >>> 8) & 255) + "." + (ip & 255);
        long[] values = new long[parts];
        for (int i = 0; i < parts - 1; i++) {
            values[i] = (ip >>> (8 * (3 - i))) & 255;
        }
        values[parts - 1] = ip & ((1L << (8 * (5 - parts))) - 1);
        StringBuilder spelled = new StringBuilder();
        for (int i = 0; i < parts; i++) {
            if (i > 0) {
                spelled.append('.');
            }
            spelled.append(switch (radix.get(i)) {
                case 0 -> Long.toString(values[i]);
                case 1 -> "0x" + Long.toHexString(values[i]);
                default -> "0" + Long.toOctalString(values[i]);
            });
        }
        assertEquals(dotted, Authority.parse(spelled.toString(), 80).host(), spelled.toString());
    }

    @Property
    void truncatedHeadsAreEofNeverAcceptedOrMisread(@ForAll @IntRange(min = 1, max = 60) int cut) {
        String head = "POST http://a.example/x HTTP/1.1\r\nHost: a.example\r\nContent-Length: 3\r\n\r\n";
        String part = head.substring(0, Math.min(cut, head.length() - 1));
        try {
            HeadParser.readRequestHead(input(part));
            throw new AssertionError("a truncated head was accepted");
        } catch (EOFException expected) {
            // the client went away mid-head
        } catch (FramingException | IOException e) {
            throw new AssertionError("unexpected " + e, e);
        }
    }
}
