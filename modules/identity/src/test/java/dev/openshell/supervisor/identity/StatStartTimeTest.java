package dev.openshell.supervisor.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/** The in-place parse of {@code /proc/<pid>/stat} field 22 against the reading of the whole line split on spaces. */
class StatStartTimeTest {
    /** The reference: the text after the last ')', trimmed, split on whitespace; field 22 is the 20th. */
    private static long reference(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0) {
            return -1;
        }
        String[] f = stat.substring(close + 1).trim().split("\\s+");
        if (f.length < 20) {
            return -1;
        }
        try {
            return Long.parseLong(f[19]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static long parsed(String stat, int buffer) {
        byte[] b = new byte[buffer];
        byte[] text = stat.getBytes(StandardCharsets.ISO_8859_1);
        int n = Math.min(text.length, buffer);
        System.arraycopy(text, 0, b, 0, n);
        return ProcTree.startTime(b, n);
    }

    @Provide
    Arbitrary<String> commands() {
        return Arbitraries.strings().withChars("ab ()\t)(x1").ofMinLength(0).ofMaxLength(64);
    }

    @Property
    void agreesWithTheSplitLine(@ForAll("commands") String comm, @ForAll @LongRange(min = 0, max = 999_999_999_999L)
            long start, @ForAll @IntRange(min = 0, max = 30) int fieldsAfter) {
        StringBuilder line = new StringBuilder("4242 (").append(comm).append(") S 1");
        for (int f = 5; f <= 21; f++) {
            line.append(' ').append(f * 7);
        }
        line.append(' ').append(start);
        for (int f = 0; f < fieldsAfter; f++) {
            line.append(' ').append(f);
        }
        String stat = line.append('\n').toString();
        assertEquals(reference(stat), parsed(stat, 4096));
        assertEquals(start, parsed(stat, 4096));
    }

    @Test
    void aLineWithFewerFieldsOrNoParenthesisIsUnreadable() {
        assertEquals(-1, parsed("12 (a) S 1 2 3\n", 4096));
        assertEquals(-1, parsed("12 a S 1 2 3\n", 4096));
        assertEquals(-1, parsed("", 4096));
    }

    @Test
    void aFieldCutOffByAFullBufferIsReportedAsSuch() {
        String stat = "1 (a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 123456789 0\n";
        int at = stat.indexOf("123456789") + 4; // the buffer ends inside field 22
        assertEquals(-2, parsed(stat, at));
        assertEquals(123456789, parsed(stat, 4096));
    }
}
