package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.internal.BodyCharsets;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The cost of reading a whole body for the charsets it declares in itself ({@link BodyCharsets}: a {@code <meta>}
 * anywhere, attacker pass 10, P12-1), as the {@code openshell/regex} stage reads every non-JSON request body and the
 * response scrub every response body it relays: microseconds per body of {@code bytes} bytes of prose
 * ({@link RegexScanBenchmark#prose}: no {@code <}), code ({@link RegexScanBenchmark#text}) or HTML (tags every
 * 40-odd bytes, a {@code <meta charset>} at the start), read whole ({@code declared}) and as a stream of 16 KiB reads
 * ({@code streamed}, as the scrub reads it).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class BodyCharsetsBenchmark {
    /** Body size in bytes. */
    @Param({"65536", "1048576"})
    public int bytes;

    /** {@code prose}, {@code code} or {@code html}. */
    @Param({"prose", "code", "html"})
    public String text;

    private ByteBuffer body;
    private byte[] array;

    /** Builds the body once per trial and checks what it declares. */
    @Setup
    public void setUp() {
        String s = switch (text) {
            case "prose" -> RegexScanBenchmark.prose(bytes);
            case "code" -> RegexScanBenchmark.text(bytes);
            default -> html(bytes);
        };
        array = s.getBytes(StandardCharsets.UTF_8);
        body = ByteBuffer.wrap(array).asReadOnlyBuffer();
        List<BodyCharsets.Declaration> found = BodyCharsets.declared(body);
        if (text.equals("html") != found.equals(List.of(new BodyCharsets.Declaration("utf-8",
                BodyCharsets.Source.META)))) {
            throw new IllegalStateException(text + ": " + found);
        }
    }

    /** {@return an HTML page of about {@code n} bytes} */
    static String html(int n) {
        StringBuilder b = new StringBuilder("<!doctype html><html><head><meta charset=\"utf-8\"><title>t</title>"
                + "</head><body>\n");
        for (int i = 0; b.length() < n; i++) {
            b.append("<p class=\"row\">Item ").append(i).append(" <a href=\"/item/").append(i)
                    .append("\">details</a> and <em>notes</em></p>\n");
        }
        return b.substring(0, n);
    }

    @Benchmark
    public List<BodyCharsets.Declaration> declared() {
        return BodyCharsets.declared(body);
    }

    @Benchmark
    public int streamed() {
        BodyCharsets.Reader reader = BodyCharsets.reader();
        int found = 0;
        for (int at = 0; at < array.length; at += 16 * 1024) {
            found += reader.read(array, at, Math.min(16 * 1024, array.length - at)).size();
        }
        return found + reader.end().size();
    }
}
