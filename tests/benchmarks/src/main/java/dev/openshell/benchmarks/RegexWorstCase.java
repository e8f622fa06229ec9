package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.JsonObject;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The thread CPU time of one {@code openshell/regex} evaluation (default config) of hostile bodies: a body made of one
 * short piece repeated (a prefix of a catalog entry such as {@code sk-} or {@code ghp_}, a keyword assignment such as
 * {@code key=}, a PEM {@code -----BEGIN } line, ...), the shapes that make the scan read the most per byte, against
 * plain runs ({@code x}, {@code x }). Sent as {@code text/plain} and as one JSON string ({@code application/json}).
 * Prints the best of 4 evaluations per body, in ms and ns per byte, and the decision. Size: the system property
 * {@code size} in bytes (default 1 MiB; at most 4 MiB less 8 for the JSON wrapping). Arguments as
 * {@link RegexCpuTimeAB}'s (one regex JAR, then the re2j JAR):
 * <pre>
 * cp=$(tr ':' '\n' &lt; tests/benchmarks/target/benchmark.classpath | grep -v '/regex-\|re2j' | paste -sd:)
 * java -cp "$cp:tests/benchmarks/target/benchmarks-0.1.0-SNAPSHOT.jar" -Dsize=1048576 \
 *     dev.openshell.benchmarks.RegexWorstCase plugins/regex/target/regex-0.1.0-SNAPSHOT.jar \
 *     ~/.m2/repository/com/google/re2j/re2j/1.8/re2j-1.8.jar
 * </pre>
 */
public final class RegexWorstCase {
    private static final String[] PIECES = {"x", "x ", "sk-", "sk-proj-", "ghp_", "glpat-", "xoxb-", "AKIA", "eyJ",
        "ZXlKa", "a-", "=", ":", "key=", "a=b&", "\"a\":\"", "-----BEGIN "};

    private RegexWorstCase() {
    }

    /**
     * Prints one line per piece and media type.
     *
     * @param args the regex JAR, then the re2j JAR
     * @throws Exception if a JAR cannot be loaded
     */
    public static void main(String[] args) throws Exception {
        MiddlewareProvider regex = RegexCpuTimeAB.load(Path.of(args[0]).toUri().toURL(),
                Path.of(args[1]).toUri().toURL());
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        int size = Integer.getInteger("size", 1 << 20);
        for (String type : new String[] {"text/plain", "application/json"}) {
            for (String piece : PIECES) {
                HttpRequestEvaluation e = evaluation(type, piece, size);
                long best = Long.MAX_VALUE;
                String decision = "";
                for (int round = 0; round < 4; round++) {
                    long start = threads.getCurrentThreadCpuTime();
                    decision = regex.evaluate(e).decision().toString();
                    best = Math.min(best, threads.getCurrentThreadCpuTime() - start);
                }
                System.out.printf(Locale.ROOT, "%-17s %-14s %8.1f ms %6.1f ns/B %s%n", type, "'" + piece + "'",
                        best / 1e6, (double) best / size, decision);
            }
        }
    }

    /** {@return a POST of {@code size} bytes of {@code piece} repeated, plain or as one JSON string member} */
    private static HttpRequestEvaluation evaluation(String type, String piece, int size) {
        String text = piece.repeat(size / piece.length() + 1).substring(0, size);
        if (type.equals("application/json")) {
            text = "{\"a\":\"" + text.replace("\"", "'") + "\"}";
        }
        HttpRequestTarget target = new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1", "");
        return new HttpRequestEvaluation(new BindingId("openshell/regex"), Phase.PRE_CREDENTIALS,
                RequestContext.of("worst"), JsonObject.EMPTY_JSON_OBJECT, target,
                List.of(new HttpHeader("content-type", type)), Body.ofUtf8(text));
    }
}
