package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
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
 * The SPI contract end to end: {@code tests/fixture-plugins/baseline-redactor}, compiled at build time against the SPI
 * as it was at the start of the contract ({@code tests/spi-baseline}, main d21d810) and never against the current
 * one, is dropped into the image's {@code plugins/} directory, pinned in the gateway configuration, and runs in a
 * chain: its body replacement and its header reach the upstream.
 */
class BaselinePluginIT {
    @TempDir
    Path tmp;

    @Test
    void aPluginBuiltAgainstTheBaselineSpiLoadsAndRunsInTheImage() throws Exception {
        Path jar = Image.plugin("fixture-baseline-redactor");
        ModuleDescriptor d = ModuleFinder.of(jar).findAll().iterator().next().descriptor();
        assertEquals("com.example.fixture.baseline", d.name());
        assertTrue(d.requires().stream().anyMatch(r -> r.name().equals("dev.openshell.middleware.spi")));

        Path image = tmp.resolve("image");
        ImageProcess.copyTree(Image.HOME, image);
        Files.copy(jar, image.resolve("plugins/baseline-redactor.jar"));
        try (RecordingUpstream upstream = new RecordingUpstream()) {
            Path policy = Files.writeString(tmp.resolve("policy.yaml"), """
                    version: 1
                    network_policies:
                      api:
                        name: test API
                        endpoints:
                          - host: api.test
                            port: %d
                    network_middlewares:
                      redact:
                        middleware: fixtures/baseline-redactor
                        order: 10
                        on_error: fail_closed
                        config: { word: hunter2 }
                        endpoints:
                          include: ["api.test"]
                    """.formatted(upstream.port()));
            Path gateway = Files.writeString(tmp.resolve("gateway.toml"), """
                    [openshell.supervisor.network]
                    allow_loopback_upstreams = true

                    [openshell.supervisor.network.static_hosts]
                    "api.test" = "127.0.0.1"
                    """ + Image.pins(image.resolve("plugins/baseline-redactor.jar")));
            try (ImageProcess s = ImageProcess.run(image, "--policy", policy.toString(),
                    "--gateway-config", gateway.toString(), "--listen", "127.0.0.1:0", "--admin-listen", "off",
                    "--state-dir", tmp.resolve("state").toString(), "--audit-log", "off")) {
                HttpClient client = HttpClient.newBuilder()
                        .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", s.port())))
                        .connectTimeout(Duration.ofSeconds(5)).build();
                HttpResponse<String> r = client.send(HttpRequest.newBuilder(
                        URI.create("http://api.test:" + upstream.port() + "/v1/login"))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"user\":\"a\",\"password\":\"hunter2\"}"))
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body() + "\n" + s.errText());
                List<RecordingUpstream.Hit> hits = upstream.hits("/v1/login");
                assertEquals(1, hits.size());
                assertEquals("{\"user\":\"a\",\"password\":\"[redacted]\"}", hits.get(0).body(),
                        "the baseline plugin's replacement body reached the upstream");
                assertEquals(List.of("baseline", "baseline-redacted"), hits.get(0).tags());
            }
        }
    }
}
