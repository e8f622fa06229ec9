package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import java.io.StringReader;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 9, item 4: the example third-party plugin, built as an outsider builds it, dropped into the {@code plugins/}
 * directory of a copy of the image, is loaded by {@code supervisor run} with no flag, and a policy that names its
 * binding runs it in a chain: the header it adds reaches the upstream.
 */
class DropInPluginIT {
    @TempDir
    Path tmp;

    @Test
    void aPluginDroppedIntoTheImageRunsInAChain() throws Exception {
        Path image = tmp.resolve("image");
        ImageProcess.copyTree(Image.HOME, image);
        Files.copy(Image.plugin("example-tagger"), image.resolve("plugins/example-tagger.jar"));
        try (RecordingUpstream upstream = new RecordingUpstream()) {
            Path policy = tmp.resolve("policy.yaml");
            Files.writeString(policy, """
                    version: 1
                    network_policies:
                      api:
                        name: test API
                        endpoints:
                          - host: api.test
                            port: %d
                    network_middlewares:
                      tag-requests:
                        middleware: examples/tagger
                        order: 10
                        config: { tag: dropped-in }
                        endpoints:
                          include: ["api.test"]
                    """.formatted(upstream.port()));
            Path gateway = tmp.resolve("gateway.toml");
            Files.writeString(gateway, """
                    [openshell.supervisor.network]
                    allow_loopback_upstreams = true

                    [openshell.supervisor.network.static_hosts]
                    "api.test" = "127.0.0.1"
                    """ + Image.pins(image.resolve("plugins/example-tagger.jar")));
            Path audit = tmp.resolve("audit.jsonl");
            try (ImageProcess s = ImageProcess.run(image, "--policy", policy.toString(),
                    "--gateway-config", gateway.toString(), "--listen", "127.0.0.1:0", "--admin-listen", "off",
                    "--state-dir", tmp.resolve("state").toString(), "--audit-log", audit.toString())) {
                HttpClient client = HttpClient.newBuilder()
                        .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", s.port())))
                        .connectTimeout(Duration.ofSeconds(5)).build();
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                        URI.create("http://api.test:" + upstream.port() + "/v1/things"))
                        .POST(HttpRequest.BodyPublishers.ofString("{\"a\":1}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body() + "\n" + s.errText());
                List<RecordingUpstream.Hit> hits = upstream.hits("/v1/things");
                assertEquals(1, hits.size());
                assertEquals(List.of("dropped-in"), hits.get(0).tags(), "the plugin's header reached the upstream");
                assertEquals("{\"a\":1}", hits.get(0).body());
                assertTrue(s.errText().contains("1 plugin"), "the generation counts one plugin binding:\n"
                        + s.errText());
            }
            JsonObject activity = Files.readAllLines(audit).stream()
                    .map(l -> Json.createReader(new StringReader(l)).readObject())
                    .filter(e -> e.getInt("class_uid") == 4002)
                    .findFirst().orElseThrow(() -> new AssertionError("no HTTP Activity event"));
            JsonObject os = activity.getJsonObject("unmapped").getJsonObject("openshell");
            assertEquals("tag-requests", os.getString("config_key"));
            assertEquals("examples/tagger", os.getString("binding_id"));
        }
    }
}
