package dev.openshell.builtin.regex;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.middleware.spi.Body;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The edges of Table 3-7, each judged as the JDK's strict decoder judges it. */
class Utf8Test {
    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "'', true",
        "41, true",
        "7f, true",
        "80, false",            // stray continuation
        "bf, false",
        "c0af, false",          // overlong
        "c1bf, false",
        "c280, true",
        "dfbf, true",
        "df, false",            // truncated
        "e080af, false",        // overlong three-byte form
        "e0a080, true",
        "ed9fbf, true",         // U+D7FF
        "eda080, false",        // surrogate U+D800
        "edbfbf, false",        // surrogate U+DFFF
        "ee8080, true",
        "efbfbf, true",         // U+FFFF
        "e282, false",          // truncated
        "e2822a, false",        // bad continuation
        "f08f8080, false",      // overlong four-byte form
        "f0908080, true",       // U+10000
        "f48fbfbf, true",       // U+10FFFF
        "f4908080, false",      // above U+10FFFF
        "f5808080, false",
        "ff, false",
        "f09080, false",        // truncated
        "41424344454647c3a9, true", // ASCII run then a two-byte form across the eight-byte step
        "4142434445464748c3, false"
    })
    void tableEdges(String hex, boolean wellFormed) {
        byte[] b = HexFormat.of().parseHex(hex);
        assertEquals(wellFormed, Utf8.isWellFormed(ByteBuffer.wrap(b)));
        assertEquals(wellFormed, Body.of(b).utf8().isPresent(), "the JDK agrees");
    }
}
