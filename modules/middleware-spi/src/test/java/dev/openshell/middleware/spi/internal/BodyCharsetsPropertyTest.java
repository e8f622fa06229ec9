package dev.openshell.middleware.spi.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link BodyCharsets}: a declaration anywhere in the first 1024 bytes, in any case, quoting and spacing, is read with
 * its name as written; one past the window is not; the reading is linear.
 */
class BodyCharsetsPropertyTest {
    enum Shape { META, META_SPACED, EQUIV, XML, XML_PI_SPACED }

    @Provide
    Arbitrary<String> names() {
        return Arbitraries.of("utf-7", "UTF-7", "UTF7", "u7", "unicode-1-1-utf-7", "utf_7", "Unicode_Escape",
                "iso-2022-jp", "x-nobody", "csUTF7", "UTF-8", "windows-1252");
    }

    @Provide
    Arbitrary<String> fillers() {
        return Arbitraries.strings().withChars("abc xyz<>/!-=\"'\n\tp").ofMaxLength(1200);
    }

    /** {@code s} with each letter in a random case. */
    private static String cased(String s, long seed) {
        StringBuilder b = new StringBuilder();
        java.util.Random r = new java.util.Random(seed);
        for (char c : s.toCharArray()) {
            b.append(r.nextBoolean() ? Character.toUpperCase(c) : c);
        }
        return b.toString();
    }

    private static String declaration(Shape shape, String name, String quote, String ws, long seed) {
        return switch (shape) {
            case META -> "<" + cased("meta", seed) + " " + cased("charset", seed) + ws + "=" + ws + quote + name
                    + quote + ">";
            case META_SPACED -> "<" + ws + "META name=x " + cased("charset", seed) + "=" + quote + name + quote
                    + " />";
            case EQUIV -> "<meta http-equiv=\"Content-Type\" content=\"text/html;" + ws + cased("charset", seed)
                    + ws + "=" + ws + name + "\">";
            case XML, XML_PI_SPACED -> "<?xml version=\"1.0\" " + cased("encoding", seed) + ws + "=" + ws
                    + (quote.isEmpty() ? "'" : quote) + name + (quote.isEmpty() ? "'" : quote) + "?>";
        };
    }

    @Property(tries = 600)
    void aMetaDeclarationAnywhereInTheWindowIsRead(@ForAll("names") String name, @ForAll Shape shape,
            @ForAll @IntRange(min = 0, max = 1000) int at, @ForAll long seed) {
        String quote = List.of("", "\"", "'").get((int) Math.floorMod(seed, 3L));
        String ws = List.of("", " ", "\t", "\n ").get((int) Math.floorMod(seed >> 3, 4L));
        String decl = declaration(shape, name, quote, ws, seed);
        String pad = shape == Shape.XML ? "" : shape == Shape.XML_PI_SPACED ? " \r\n\t" : "x".repeat(
                Math.max(0, Math.min(at, BodyCharsets.WINDOW - decl.length())));
        byte[] body = (pad + decl + "<p>tail</p>").getBytes(StandardCharsets.US_ASCII);
        List<BodyCharsets.Declaration> found = BodyCharsets.declared(body, body.length);
        assertTrue(found.stream().anyMatch(d -> d.name().equals(name)), () -> new String(body) + " -> " + found);
    }

    @Example
    void aNameCutByTheWindowIsReadAsFarAsItGoes() {
        String decl = "<meta charset=\"utf-7\">";
        byte[] body = ("y".repeat(BodyCharsets.WINDOW - decl.length() + 3) + decl).getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of(new BodyCharsets.Declaration("utf-", BodyCharsets.Source.META)),
                BodyCharsets.declared(body, body.length));
    }

    @Property(tries = 200)
    void aMetaDeclarationPastTheWindowIsNotRead(@ForAll("names") String name,
            @ForAll @IntRange(min = 0, max = 500) int past) {
        String decl = "<meta charset=\"" + name + "\">";
        // a tag cut by the window is read with what it holds (a name cut short is judged as written); one that
        // starts where "<meta" no longer fits is not read
        byte[] body = ("y".repeat(BodyCharsets.WINDOW - 4 + past) + decl)
                .getBytes(StandardCharsets.US_ASCII);
        assertEquals(List.of(), BodyCharsets.declared(body, body.length));
    }

    @Property(tries = 300)
    void anyInputIsReadWithoutThrowing(@ForAll("fillers") String text) {
        byte[] b = text.getBytes(StandardCharsets.ISO_8859_1);
        BodyCharsets.declared(b, b.length).forEach(d -> assertTrue(!d.name().isBlank()));
    }

    @Example
    void signatures() {
        for (String sig : List.of("+/v8", "+/v9", "+/v+", "+/v/", "+/v8-")) {
            byte[] b = (sig + "abc").getBytes(StandardCharsets.US_ASCII);
            assertEquals(List.of(new BodyCharsets.Declaration("UTF-7", BodyCharsets.Source.SIGNATURE)),
                    BodyCharsets.declared(b, b.length), sig);
        }
        byte[] bom = {(byte) 0xff, (byte) 0xfe, 'a', 0};
        assertEquals("UTF-16LE", BodyCharsets.declared(bom, 4).get(0).name());
        assertEquals(List.of(), BodyCharsets.declared(" +/v8".getBytes(StandardCharsets.US_ASCII), 5));
    }

    @Example
    void aWindowOfUnclosedTagsIsReadInLinearTime() {
        byte[] b = "<meta a=\"<meta ".repeat(200).getBytes(StandardCharsets.US_ASCII);
        long start = System.nanoTime();
        for (int i = 0; i < 2000; i++) {
            BodyCharsets.declared(b, b.length);
        }
        assertTrue(System.nanoTime() - start < 2_000_000_000L, "2000 worst-case windows in under 2 s");
    }
}
