package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The system's {@code curl}, run as a process with no proxy settings but those a test gives. */
final class Curl {
    private Curl() {
    }

    /**
     * One run.
     *
     * @param exit curl's exit code (0 on any HTTP answer; 56 when a CONNECT is refused; 60 on an untrusted
     *     certificate)
     * @param status the HTTP status ({@code %{http_code}}; 0 when there was no answer)
     * @param body the response body
     * @param err curl's standard error
     */
    record Result(int exit, int status, String body, String err) {
        @Override
        public String toString() {
            return "curl exit " + exit + ", HTTP " + status + ", body " + body + ", stderr " + err;
        }
    }

    static Path binary() {
        for (String dir : List.of("/usr/bin", "/bin", "/usr/local/bin")) {
            Path p = Path.of(dir, "curl");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        assumeTrue(false, "curl is not installed (.ci/run installs it)");
        throw new IllegalStateException();
    }

    /**
     * Runs {@code curl -q -sS --max-time 30 -o BODY -w %{http_code} ARGS}.
     *
     * @param env extra environment (for example {@code HTTPS_PROXY})
     * @param args the rest of the command line
     */
    static Result run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        Path body = Files.createTempFile("curl-body", ".bin");
        Path err = Files.createTempFile("curl-err", ".txt");
        try {
            List<String> cmd = new ArrayList<>(List.of(binary().toString(), "-q", "-sS", "--max-time", "30",
                    "-o", body.toString(), "-w", "%{http_code}"));
            cmd.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(cmd);
            Map<String, String> e = pb.environment();
            for (String v : List.of("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy",
                    "ALL_PROXY", "no_proxy", "NO_PROXY", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR")) {
                e.remove(v);
            }
            e.putAll(env);
            pb.redirectError(err.toFile());
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("curl did not finish within 60 s: " + cmd);
            }
            int status = out.matches("\\d{3}") ? Integer.parseInt(out) : 0;
            return new Result(p.exitValue(), status, Files.readString(body, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(body);
            Files.deleteIfExists(err);
        }
    }

    /** Same as {@link #run(Map, String...)} with no extra environment. */
    static Result run(String... args) throws IOException, InterruptedException {
        return run(Map.of(), args);
    }
}
