package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The test's SigV4 verifier agrees with AWS's published test suite ({@code tests/data/conformance/sigv4}): every signed
 * request ({@code .sreq}) verifies with the suite's key, its canonical request is the suite's ({@code .creq}, where
 * the suite signs the same header set), and any change to method, path, query, a signed header, the body or the key
 * is refused. Without this, an end-to-end test that trusts the verifier would prove nothing.
 */
class SigV4VerifierTest {
    static final Path SUITE = Paths.get(System.getProperty("supervisor.testdata", "../../tests/data"), "conformance",
            "sigv4");
    static final SigV4Verifier.Key SUITE_KEY = new SigV4Verifier.Key("AKIDEXAMPLE",
            "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1", "service");

    /** A request from a {@code .sreq} file. */
    record Wire(String method, String path, String query, Map<String, List<String>> headers, byte[] body) {
        SigV4Verifier.Verdict verify(SigV4Verifier.Key key) {
            return SigV4Verifier.verify(key, method, path, query, headers, body);
        }

        Wire withHeader(String name, String value) {
            Map<String, List<String>> h = new LinkedHashMap<>(headers);
            h.put(name, List.of(value));
            return new Wire(method, path, query, h, body);
        }
    }

    static Stream<Named<Path>> signedRequests() throws IOException {
        try (Stream<Path> files = Files.walk(SUITE)) {
            // left out: folded (obs-fold) header lines, which cannot reach an HTTP/1.1 server (RFC 9112 section 5.2
            // rejects them), and the one published case whose .sts is not the hash of its own .creq (the
            // supervisor's SigV4SuiteTest documents the same inconsistency)
            return files.filter(p -> p.toString().endsWith(".sreq"))
                    .filter(p -> !Set.of("get-header-value-multiline.sreq",
                            "post-x-www-form-urlencoded-parameters.sreq").contains(p.getFileName().toString()))
                    .sorted().map(p -> Named.of(p.getFileName().toString().replace(".sreq", ""), p)).toList()
                    .stream();
        }
    }

    static Wire parse(Path sreq) throws IOException {
        String text = Files.readString(sreq, StandardCharsets.UTF_8);
        int split = text.indexOf("\n\n");
        String head = split < 0 ? text : text.substring(0, split);
        byte[] body = split < 0 ? new byte[0] : text.substring(split + 2).getBytes(StandardCharsets.UTF_8);
        String[] lines = head.split("\n");
        String requestLine = lines[0];
        String method = requestLine.substring(0, requestLine.indexOf(' '));
        String target = requestLine.substring(method.length() + 1, requestLine.lastIndexOf(' '));
        int q = target.indexOf('?');
        Map<String, List<String>> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.computeIfAbsent(lines[i].substring(0, colon).toLowerCase(Locale.ROOT), k -> new ArrayList<>())
                    .add(lines[i].substring(colon + 1).strip());
        }
        return new Wire(method, q < 0 ? target : target.substring(0, q), q < 0 ? "" : target.substring(q + 1),
                headers, body);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("signedRequests")
    void everySignedRequestOfTheSuiteVerifies(Path sreq) throws IOException {
        Wire w = parse(sreq);
        SigV4Verifier.Verdict v = w.verify(SUITE_KEY);
        assertTrue(v.valid(), v.problem() + "\n" + v.canonicalRequest());

        Path creq = sreq.resolveSibling(sreq.getFileName().toString().replace(".sreq", ".creq"));
        String expected = Files.readString(creq, StandardCharsets.UTF_8);
        String signedLine = String.join(";", v.signedHeaders());
        if (expected.contains("\n" + signedLine + "\n")) {
            assertEquals(expected, v.canonicalRequest());
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("signedRequests")
    void anyChangeToTheSignedRequestIsRefused(Path sreq) throws IOException {
        Wire w = parse(sreq);
        List<Wire> changed = new ArrayList<>(List.of(
                new Wire(w.method().equals("GET") ? "POST" : "GET", w.path(), w.query(), w.headers(), w.body()),
                new Wire(w.method(), w.path() + "x", w.query(), w.headers(), w.body()),
                new Wire(w.method(), w.path(), w.query().isEmpty() ? "a=b" : w.query() + "&a=b", w.headers(),
                        w.body()),
                new Wire(w.method(), w.path(), w.query(), w.headers(), (new String(w.body(),
                        StandardCharsets.UTF_8) + "!").getBytes(StandardCharsets.UTF_8)),
                w.withHeader("host", "example.amazonaws.com.evil"),
                w.withHeader("x-amz-date", "20150830T123601Z")));
        for (Wire c : changed) {
            assertFalse(c.verify(SUITE_KEY).valid(), c.toString());
        }
        assertFalse(w.verify(new SigV4Verifier.Key("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEz",
                "us-east-1", "service")).valid());
        assertFalse(w.verify(new SigV4Verifier.Key("AKIDEXAMPLE", SUITE_KEY.secretAccessKey(), "eu-west-1",
                "service")).valid());
        assertFalse(w.verify(new SigV4Verifier.Key("AKIDOTHER", SUITE_KEY.secretAccessKey(), "us-east-1",
                "service")).valid());
    }
}
