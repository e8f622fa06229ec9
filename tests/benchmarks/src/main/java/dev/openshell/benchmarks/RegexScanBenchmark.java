package dev.openshell.benchmarks;

import dev.openshell.middleware.spi.BindingId;
import dev.openshell.middleware.spi.Body;
import dev.openshell.middleware.spi.HttpHeader;
import dev.openshell.middleware.spi.HttpRequestEvaluation;
import dev.openshell.middleware.spi.HttpRequestResult;
import dev.openshell.middleware.spi.HttpRequestTarget;
import dev.openshell.middleware.spi.MiddlewareProvider;
import dev.openshell.middleware.spi.Phase;
import dev.openshell.middleware.spi.RequestContext;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
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
 * The cost of {@code openshell/regex}'s secret scan alone (issue 37), with the seven formats the built-in always
 * knew and with its whole catalog, on clean text of 1 KiB, 64 KiB and 4 MiB, no secret (the common case, where every
 * byte is read and nothing is redacted): {@code text=prose}, ordinary English prose ({@link #prose}), and
 * {@code text=code}, prose with code and configuration lines ({@link #text}).
 *
 * <ul>
 *   <li>{@link #scan}: the package-private scanner itself ({@code SecretScanner.scan}), reached by reflection on the
 *       class path, as the built-in exports nothing. It works with the scanner before the catalog (a
 *       {@code Set<SecretKind>}) and with it (a {@code Selection}), so the same benchmark runs against either jar;</li>
 *   <li>{@link #evaluate}: {@code RegexProvider.evaluate} on the same text sent as {@code text/plain}, the scan plus
 *       the UTF-8 check and the stage's config look-up.</li>
 * </ul>
 * {@code catalog=seven} looks for the seven formats only ({@code patterns} naming them); {@code catalog=all} uses the
 * default config (every entry enabled by default; before the catalog, the same seven).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RegexScanBenchmark {
    private static final List<String> SEVEN = List.of("private_key", "anthropic_api_key", "openai_api_key",
            "aws_access_key_id", "github_token", "slack_token", "google_api_key");
    private static final HttpRequestTarget TARGET =
            new HttpRequestTarget("https", "api.example.com", 443, "POST", "/v1/messages", "");

    /** Text size in bytes. */
    @Param({"1024", "65536", "4194304"})
    public int bytes;

    /** {@code seven} or {@code all}. */
    @Param({"seven", "all"})
    public String catalog;

    /** {@code prose} or {@code code}. */
    @Param({"prose", "code"})
    public String text;

    private ByteBuffer input;
    private MethodHandle scan;
    private Object selection;
    private MiddlewareProvider regex;
    private HttpRequestEvaluation evaluation;

    /** Builds the text, the scanner's selection and the stage's evaluation once per trial. */
    @Setup
    public void setUp() throws ReflectiveOperationException {
        byte[] b = (text.equals("prose") ? prose(bytes) : text(bytes)).getBytes(StandardCharsets.UTF_8);
        input = ByteBuffer.wrap(b).asReadOnlyBuffer();
        regex = RegexChainBenchmark.loadRegex();
        ClassLoader loader = regex.getClass().getClassLoader();
        Class<?> scanner = Class.forName("dev.openshell.builtin.regex.SecretScanner", true, loader);
        Method m = null;
        for (Method candidate : scanner.getDeclaredMethods()) {
            if (candidate.getName().equals("scan") && candidate.getParameterCount() == 3) {
                m = candidate;
            }
        }
        if (m == null) {
            throw new IllegalStateException("no SecretScanner.scan(text, what, redact)");
        }
        m.setAccessible(true);
        scan = MethodHandles.lookup().unreflect(m).asType(MethodType.methodType(Object.class, ByteBuffer.class,
                Object.class, boolean.class));
        selection = selection(m.getParameterTypes()[1], loader);
        JsonObject config = catalog.equals("seven") ? Json.createObjectBuilder().add("patterns", seven()).build()
                : JsonObject.EMPTY_JSON_OBJECT;
        evaluation = new HttpRequestEvaluation(new BindingId("openshell/regex"), Phase.PRE_CREDENTIALS,
                RequestContext.of("bench"), config, TARGET,
                List.of(new HttpHeader("content-type", "text/plain; charset=utf-8")), Body.of(b));
        HttpRequestResult check = regex.evaluate(evaluation);
        if (!check.findings().isEmpty()) {
            throw new IllegalStateException("the benchmark text holds a secret: " + check.findings());
        }
    }

    private static JsonArrayBuilder seven() {
        JsonArrayBuilder a = Json.createArrayBuilder();
        SEVEN.forEach(a::add);
        return a;
    }

    /** The scanner's second argument: {@code Selection} (the catalog) or {@code Set<SecretKind>} (before it). */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private Object selection(Class<?> type, ClassLoader loader) throws ReflectiveOperationException {
        if (type == Set.class) {
            Class<Enum> kind = (Class<Enum>) Class.forName("dev.openshell.builtin.regex.SecretKind", true, loader);
            return java.util.EnumSet.allOf(kind);
        }
        if (catalog.equals("all")) {
            Method defaults = type.getDeclaredMethod("defaults");
            defaults.setAccessible(true);
            return defaults.invoke(null);
        }
        Class<?> catalogClass = Class.forName("dev.openshell.builtin.regex.Catalog", true, loader);
        Method get = catalogClass.getDeclaredMethod("get");
        get.setAccessible(true);
        Object cat = get.invoke(null);
        Method byId = catalogClass.getDeclaredMethod("byId", String.class);
        byId.setAccessible(true);
        List<Object> rules = new java.util.ArrayList<>();
        for (String id : SEVEN) {
            rules.add(byId.invoke(cat, id));
        }
        Method of = type.getDeclaredMethod("of", List.class);
        of.setAccessible(true);
        return of.invoke(null, rules);
    }

    /** {@return the scan's result} */
    @Benchmark
    public Object scan() throws Throwable {
        return scan.invokeExact(input, selection, true);
    }

    /** {@return the stage's result} */
    @Benchmark
    public HttpRequestResult evaluate() {
        return regex.evaluate(evaluation);
    }

    /** {@return ordinary English prose of exactly {@code size} bytes, no code and no secret} */
    static String prose(int size) {
        String[] sentences = {
            "The committee met on Tuesday to review the budget for the coming year. ",
            "Several members asked whether the library could stay open later in the evening during exams. ",
            "After a long discussion, they agreed to extend the hours on a trial basis and to report back in spring. ",
            "Meanwhile the garden behind the town hall needs new benches, and volunteers have offered to paint them. ",
            "Everyone thanked the outgoing treasurer, who had kept careful records for more than ten years.\n",
            "Weather permitting, the annual fair will take place on the first Saturday of June near the river. ",
        };
        StringBuilder b = new StringBuilder(size + 128);
        for (int i = 0; b.length() < size; i++) {
            b.append(sentences[i % sentences.length]);
        }
        b.setLength(size);
        return b.toString();
    }

    /**
     * {@return clean text of exactly {@code size} bytes: prose, code and configuration lines with the words secrets
     * sit next to (token, key, secret, password, provider names) but no secret}
     */
    static String text(int size) {
        String[] lines = {
            "The quick brown fox jumps over the lazy dog while the agent drafts a reply to the user.\n",
            "def load_settings(path):\n    config = read(path)  # the token list comes from the tokenizer\n",
            "    return config.get('timeout', 30), config.get('retries', 3)\n",
            "Please check the GitHub issue about Stripe webhooks and the Slack channel for the deploy notes.\n",
            "export PATH=/usr/local/bin:$PATH; cd ~/projects/patterns && make test-all -j2\n",
            "{\"model\": \"claude-sonnet\", \"max_tokens\": 1024, \"stream\": true, \"temperature\": 0.2}\n",
            "SELECT id, name, created_at FROM accounts WHERE plan = 'pro' ORDER BY created_at DESC;\n",
            "The password reset form asks for the username and sends a link; the secret is never shown.\n",
        };
        StringBuilder b = new StringBuilder(size + 128);
        for (int i = 0; b.length() < size; i++) {
            b.append(lines[i % lines.length]);
        }
        b.setLength(size);
        return b.toString();
    }
}
