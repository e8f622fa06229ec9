package dev.openshell.supervisor.l7;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The test that lets a JSON body skip the strict parse for {@code _method} ({@code docs/policy-reference.md}, "Method
 * override"), read on the body's bytes, decides as the same test on its decoded, lowercased text did: texts of
 * {@code method} in mixed case, its parts, backslashes before {@code u} and {@code U}, characters that lowercase to
 * other ASCII letters or to more than one character, other non-ASCII characters, and bytes that are not UTF-8.
 */
class OverrideScanPropertyTest {
    /** The test as it was: decode strictly, lowercase, look for {@code method} and {@code \\u}. */
    private static Optional<Boolean> reference(byte[] body) {
        Optional<String> text = Bodies.utf8(body);
        if (text.isEmpty()) {
            return Optional.empty();
        }
        String lower = text.get().toLowerCase(Locale.ROOT);
        return Optional.of(lower.contains("method") || lower.contains("\\u"));
    }

    private static Optional<Boolean> onBytes(byte[] body) {
        if (Bodies.utf8(body).isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(OverrideForms.mayNameMethod(body));
    }

    @Provide
    Arbitrary<byte[]> bodies() {
        List<String> pieces = List.of("method", "METHOD", "MeThOd", "metho", "ethod", "m", "e", "t", "h", "o", "d",
                "\\", "u", "U", "\\u", "\\U", "\"_method\":", "{", "}", "\u0130", "\u212a", "\u0131", "\u017f",
                "\u00e9", "\u20ac", "\ud83d\ude00", " ", "x", "\u039c\u0395\u03a4");
        Arbitrary<byte[]> text = Arbitraries.of(pieces).list().ofMaxSize(12)
                .map(l -> String.join("", l).getBytes(StandardCharsets.UTF_8));
        Arbitrary<byte[]> raw = Arbitraries.bytes().array(byte[].class).ofMaxSize(24);
        return Arbitraries.oneOf(text, text, raw);
    }

    @Property(tries = 2000)
    void theByteTestDecidesAsTheTextTest(@ForAll("bodies") byte[] body) {
        assertEquals(reference(body), onBytes(body));
    }

    @Property(tries = 500)
    void asciiIsNoByteAbove0x7f(@ForAll("bodies") byte[] body) {
        boolean expected = true;
        for (byte c : body) {
            expected &= c >= 0;
        }
        assertEquals(expected, OverrideForms.ascii(body));
    }
}
