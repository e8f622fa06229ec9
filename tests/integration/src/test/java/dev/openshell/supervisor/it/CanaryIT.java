package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 8, item 2 end to end: requests full of canary secrets go through every path this machine can reach (allow,
 * redact, middleware deny, L4 deny, SSRF deny, fail_open bypass, fail_closed refusal, framing refusals, a
 * {@code tls: skip} tunnel, an external stage answering and then failing), with the supervisor logging at debug level.
 * No canary may appear in the audit log, standard output, standard error, the metrics, or any response the proxy
 * itself wrote. Every audit line of the run is a JSON object of a class the supervisor emits.
 */
class CanaryIT {
    /** Every canary holds this random token; a leak of any part of any canary that keeps it is found. */
    private static final String TOKEN = token();
    private static final String KEY = "sk-proj-cnry" + TOKEN + "keyABCDEFGHIJ0123456789";
    private static final String EMAIL = "cnry" + TOKEN + "@corp.example";

    @TempDir
    Path tmp;

    private static String token() {
        SecureRandom r = new SecureRandom();
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            b.append((char) ('a' + r.nextInt(26)));
        }
        return b.toString();
    }

    private static String canary(String where) {
        return "cnry-" + where + "-" + TOKEN;
    }

    private static String body() {
        return "{\"model\":\"gpt-4o\",\"messages\":[{\"role\":\"user\",\"content\":\"key " + KEY + " mail " + EMAIL
                + " note " + canary("body") + " aws AKIAIOSFODNN7EXAMPLE\"}]}";
    }

    /** curl arguments putting canaries in the path, query, headers and body. */
    private static List<String> loaded(String url, String data) {
        return List.of("-H", "X-Canary: " + canary("header"), "-H", "Authorization: Bearer " + canary("auth"),
                "-H", "Cookie: session=" + canary("cookie"), "-H", "Content-Type: application/json",
                "-H", "User-Agent: agent/" + canary("ua"), "--data-binary", data,
                url + "/" + canary("path") + "?q=" + canary("query") + "&key=" + KEY);
    }

    @Test
    void noCanaryAppearsInAnyOutputOnAnyPath() throws Exception {
        Path logging = Files.writeString(tmp.resolve("logging.properties"), """
                handlers = java.util.logging.ConsoleHandler
                java.util.logging.ConsoleHandler.level = ALL
                java.util.logging.ConsoleHandler.formatter = java.util.logging.SimpleFormatter
                java.util.logging.SimpleFormatter.format = %1$tFT%1$tT.%1$tLZ %4$s %3$s: %5$s%6$s%n
                .level = INFO
                dev.openshell.level = ALL
                """);
        Path bigFile = Files.writeString(tmp.resolve("big.json"), (body() + "\n").repeat(
                ProxyWorld.TAGGER_LIMIT / body().length() + 2));
        List<String> responses = new ArrayList<>();
        Map<String, Integer> statuses = new LinkedHashMap<>();
        String stdout;
        String stderr;
        String metrics;
        PrivacyGuardProcess guard = PrivacyGuardProcess.start(0);
        try (guard;
             ProxyWorld world = ProxyWorld.create(tmp.resolve("world"), OptionalInt.of(guard.port()));
             SupervisorProcess s = SupervisorProcess.start(world.runArgs(true), Map.of("SUPERVISOR_JAVA_OPTS",
                     "-Djava.util.logging.config.file=" + logging))) {
            String up = ":" + world.plain.port();
            String ups = ":" + world.tls.port();
            Map<String, String> httpsProxy = Map.of("HTTPS_PROXY", s.proxyUrl());
            String ca = world.supervisorCa().toString();
            String data = body();

            record Call(String name, Map<String, String> env, List<String> args) {
            }
            List<Call> calls = new ArrayList<>();
            calls.add(new Call("allow http", Map.of(), loaded("http://" + ProxyWorld.PLAIN + up, data)));
            calls.add(new Call("allow https", httpsProxy, loaded("https://" + ProxyWorld.PLAIN + ups, data)));
            calls.add(new Call("redact http", Map.of(), loaded("http://" + ProxyWorld.REDACT + up, data)));
            calls.add(new Call("redact https", httpsProxy, loaded("https://" + ProxyWorld.REDACT + ups, data)));
            calls.add(new Call("middleware deny", Map.of(), loaded("http://" + ProxyWorld.DENY + up, data)));
            calls.add(new Call("L4 deny", Map.of(), loaded("http://" + ProxyWorld.DENIED + up, data)));
            calls.add(new Call("L4 deny CONNECT", httpsProxy, loaded("https://" + ProxyWorld.DENIED + ups, data)));
            calls.add(new Call("SSRF deny", Map.of(), loaded("http://" + ProxyWorld.METADATA, data)));
            calls.add(new Call("tagger small", Map.of(), loaded("http://" + ProxyWorld.OPEN + up, data)));
            calls.add(new Call("fail_open over cap", Map.of(), loaded("http://" + ProxyWorld.OPEN + up,
                    "@" + bigFile)));
            calls.add(new Call("fail_closed over cap", Map.of(), loaded("http://" + ProxyWorld.CLOSED + up,
                    "@" + bigFile)));
            calls.add(new Call("host mismatch", Map.of(), List.of("-H", "Host: " + canary("host") + ".test",
                    "--data-binary", data, "http://" + ProxyWorld.PLAIN + up + "/" + canary("path"))));
            calls.add(new Call("tls skip", httpsProxy, List.of("--cacert", world.upstreamCa.certFile().toString(),
                    "-H", "X-Canary: " + canary("header"), "--data-binary", data,
                    "https://" + ProxyWorld.SKIP + ups + "/" + canary("path"))));
            calls.add(new Call("external stage", Map.of(), loaded("http://" + ProxyWorld.GUARDED + up, data)));
            calls.add(new Call("external stage fail_open host", Map.of(),
                    loaded("http://" + ProxyWorld.GUARDED_OPEN + up, data)));
            for (Call c : calls) {
                List<String> args = new ArrayList<>(List.of("--cacert", ca));
                if (c.env().isEmpty()) {
                    args.addAll(List.of("-x", s.proxyUrl()));
                }
                args.addAll(c.args());
                Curl.Result r = Curl.run(c.env(), args.toArray(String[]::new));
                statuses.put(c.name(), r.status());
                if (!r.body().equals("ok")) {
                    responses.add(c.name() + ": " + r.body());
                }
            }
            // framing refusals with canaries in what the parser rejects
            String target = "http://" + ProxyWorld.PLAIN + up + "/" + canary("path") + "?q=" + canary("query");
            String host = "Host: " + ProxyWorld.PLAIN + up + "\r\n";
            for (String raw : List.of(
                    "GET " + target + " HTTP/1.1\r\n" + host + "X-Bad: " + canary("ctl") + "\u0001\r\n\r\n",
                    "GET " + target + " HTTP/1.1\r\n" + host + "X-Fold: a\r\n " + canary("fold") + "\r\n\r\n",
                    "GET " + target + " HTTP/1.1\r\n" + host + "X-Space : " + canary("space") + "\r\n\r\n",
                    "POST " + target + " HTTP/1.1\r\n" + host + "Content-Length: 5\r\nContent-Length: "
                            + canary("cl") + "\r\n\r\nhello",
                    "POST " + target + " HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n"
                            + canary("chunk") + "\r\nxx\r\n0\r\n\r\n")) {
                RawClient.Response r = RawClient.exchange(s.host(), s.port(), raw);
                assertEquals(400, r.status(), r.head());
                responses.add("raw: " + r.head() + r.body());
            }

            // the external service goes away: fail_closed refuses, fail_open bypasses
            guard.close();
            Curl.Result failed = Curl.run(loadedArgs(s, "http://" + ProxyWorld.GUARDED + up, data));
            statuses.put("external failure fail_closed", failed.status());
            responses.add("external failure: " + failed.body());
            Curl.Result bypass = Curl.run(loadedArgs(s, "http://" + ProxyWorld.GUARDED_OPEN + up, data));
            statuses.put("external failure fail_open", bypass.status());

            metrics = Curl.run("http://127.0.0.1:" + s.adminPort().orElseThrow() + "/metrics").body();
            assertEquals(143, s.terminate());
            stdout = s.stdout();
            stderr = s.stderr();
            String audit = Files.readString(world.audit, StandardCharsets.UTF_8);

            // every path behaved as intended, so the scan below covers what it claims to
            assertEquals(Map.ofEntries(
                    Map.entry("allow http", 200), Map.entry("allow https", 200), Map.entry("redact http", 200),
                    Map.entry("redact https", 200), Map.entry("middleware deny", 403), Map.entry("L4 deny", 403),
                    Map.entry("L4 deny CONNECT", 0), Map.entry("SSRF deny", 403), Map.entry("tagger small", 200),
                    Map.entry("fail_open over cap", 200), Map.entry("fail_closed over cap", 413),
                    Map.entry("host mismatch", 400), Map.entry("tls skip", 200), Map.entry("external stage", 200),
                    Map.entry("external stage fail_open host", 200),
                    Map.entry("external failure fail_closed", 403),
                    Map.entry("external failure fail_open", 200)), statuses);
            assertTrue(stderr.contains(" FINE dev.openshell."), "debug logging was on:\n" + stderr);

            List<JsonObject> events = AuditLog.read(world.audit);
            Set<String> decisions = new TreeSet<>();
            for (JsonObject e : events) {
                JsonObject os = AuditLog.openshell(e);
                if (os.containsKey("decision")) {
                    decisions.add(os.getString("config_key", String.join(",",
                            os.containsKey("config_keys") ? os.getJsonArray("config_keys").getValuesAs(
                                    jakarta.json.JsonString.class).stream().map(jakarta.json.JsonString::getString)
                                    .toList() : List.of())) + "=" + os.getString("decision"));
                }
            }
            for (String expected : List.of("secrets=allowed", "secrets-deny=denied", "tag-open=allowed",
                    "tag-open=bypass", "tag-closed=deny", "privacy=allowed", "privacy-open=allowed",
                    "privacy=deny", "privacy-open=bypass")) {
                assertTrue(decisions.contains(expected), expected + " in " + decisions);
            }

            Map<String, String> outputs = new LinkedHashMap<>();
            outputs.put("audit log", audit);
            outputs.put("stdout", stdout);
            outputs.put("stderr", stderr);
            outputs.put("metrics", metrics);
            outputs.put("proxy responses", String.join("\n", responses));
            List<String> leaks = new ArrayList<>();
            outputs.forEach((where, text) -> {
                if (text.contains(TOKEN)) {
                    leaks.add(where + ": " + text.lines().filter(l -> l.contains(TOKEN))
                            .collect(Collectors.joining("\n  ", "\n  ", "")));
                }
                for (String fixed : List.of("AKIAIOSFODNN7EXAMPLE", "sk-proj-cnry")) {
                    if (text.contains(fixed)) {
                        leaks.add(where + " holds " + fixed);
                    }
                }
            });
            assertEquals(List.of(), leaks, "canaries leaked");
            assertFalse(audit.isEmpty());
        }
    }

    private static String[] loadedArgs(SupervisorProcess s, String url, String data) {
        List<String> args = new ArrayList<>(List.of("-x", s.proxyUrl()));
        args.addAll(loaded(url, data));
        return args.toArray(String[]::new);
    }
}
