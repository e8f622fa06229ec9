package dev.openshell.supervisor.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.Body;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * The delivered response is correctly framed for any sequence of unit results: whatever the response stages return
 * for each unit (nothing, empty pieces, several pieces, more or fewer bytes than came in), held whole or streamed,
 * for a Content-Length or chunked upstream body, the client reads exactly the concatenation of what the stages
 * returned, framed by its exact Content-Length (held, or complete before the head went) or chunked (streamed), and
 * the same client connection then serves the next request.
 */
class ResponseFramingPropertyTest {
    private static Path dir;
    private static ProxyFixture fx;
    /** What the current try's stage returns, unit after unit (cycled), and what it did return. */
    private static volatile List<List<String>> script = List.of();
    private static volatile boolean whole;
    private static final List<String> returned = new CopyOnWriteArrayList<>();

    @BeforeContainer
    static void start() throws Exception {
        dir = TestDirs.create("response-framing");
        fx = ProxyFixture.withSteps(dir, s -> s.responses = (p, r, response) -> {
            if (!r.target().path().equals("/body")) {
                return null;
            }
            return new ResponseVerdict.Deliver(response.headers(), Optional.of(new Scripted(script, whole)));
        });
    }

    @AfterContainer
    static void stop() throws Exception {
        try {
            fx.close();
        } finally {
            TestDirs.delete(dir); // jqwik has no @TempDir for a container: the fixture's CA and state go here
        }
    }

    /** Returns the script's outputs, one entry per unit, cycling; held until the end when {@code whole}. */
    static final class Scripted implements ResponseBody {
        private final List<List<String>> outputs;
        private boolean holding;
        private int unit;
        private final List<Body> held = new ArrayList<>();

        Scripted(List<List<String>> outputs, boolean whole) {
            this.outputs = outputs;
            this.holding = whole;
        }

        @Override
        public boolean holdsHead() {
            return holding;
        }

        @Override
        public Duration accumulationDeadline() {
            return Duration.ofSeconds(10);
        }

        @Override
        public List<Body> unit(Body data, boolean end) {
            List<Body> out = new ArrayList<>();
            for (String s : outputs.get(unit++ % outputs.size())) {
                returned.add(s);
                out.add(Body.ofUtf8(s));
            }
            if (holding) {
                held.addAll(out);
                if (!end) {
                    return List.of();
                }
                holding = false;
                return List.copyOf(held);
            }
            return out;
        }

        @Override
        public List<Body> accumulationTimedOut() {
            return List.of();
        }

        @Override
        public void end(boolean complete) {
        }
    }

    @Provide
    Arbitrary<List<List<String>>> scripts() {
        Arbitrary<String> piece = Arbitraries.strings().withChars("abcxyz\r\n0").ofMinLength(0).ofMaxLength(40)
                .injectDuplicates(0.1).edgeCases(c -> c.add(""));
        return piece.list().ofMinSize(0).ofMaxSize(4).list().ofMinSize(1).ofMaxSize(6);
    }

    @Property(tries = 60)
    void whatTheStagesReturnIsExactlyWhatTheClientReadsAndTheConnectionIsReused(
            @ForAll("scripts") List<List<String>> outputs, @ForAll boolean holdWhole, @ForAll boolean chunkedUpstream,
            @ForAll("pieces") List<String> upstreamPieces) throws Exception {
        script = outputs;
        whole = holdWhole;
        returned.clear();
        fx.upstream.respond(r -> {
            if (!r.head().startsWith("GET /body")) {
                return TestUpstream.ok("next");
            }
            StringBuilder b = new StringBuilder("HTTP/1.1 200 OK\r\n");
            if (chunkedUpstream) {
                b.append("Transfer-Encoding: chunked\r\n\r\n");
                for (String p : upstreamPieces) {
                    if (!p.isEmpty()) {
                        b.append(Integer.toHexString(p.length())).append("\r\n").append(p).append("\r\n");
                    }
                }
                b.append("0\r\n\r\n");
            } else {
                String body = String.join("", upstreamPieces);
                b.append("Content-Length: ").append(body.length()).append("\r\n\r\n").append(body);
            }
            return TestUpstream.bytes(b.toString());
        });
        try (RawClient c = fx.client()) {
            RawClient.Response r = c.send("GET " + fx.apiUrl("/body") + " HTTP/1.1\r\nHost: " + fx.apiAuthority()
                    + "\r\n\r\n").read();
            assertEquals(200, r.status());
            assertEquals(String.join("", returned), new String(r.body(), StandardCharsets.UTF_8));
            if (holdWhole || r.header("content-length") != null) {
                // held whole (or complete before anything went): framed by its exact length
                assertEquals(String.valueOf(r.body().length), r.header("content-length"), r.head());
                assertEquals(null, r.header("transfer-encoding"), r.head());
            } else {
                assertTrue("chunked".equalsIgnoreCase(r.header("transfer-encoding")), r.head());
            }
            RawClient.Response next = c.send("GET " + fx.apiUrl("/next") + " HTTP/1.1\r\nHost: "
                    + fx.apiAuthority() + "\r\n\r\n").read();
            assertEquals("next", next.bodyText(), "the client connection serves the next request");
        }
    }

    @Provide
    Arbitrary<List<String>> pieces() {
        return Arbitraries.strings().withChars("pqrs").ofMinLength(0).ofMaxLength(300).list().ofMinSize(0)
                .ofMaxSize(5);
    }
}
