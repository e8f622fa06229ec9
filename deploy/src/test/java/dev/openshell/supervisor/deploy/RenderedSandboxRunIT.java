package dev.openshell.supervisor.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.supervisor.deploy.KubernetesManifestsIT.Rendered;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rendered production overlay run against the runtime image, as the kubelet would run it: Privacy Guard with its
 * Deployment's arguments (mutual TLS), the supervisor sidecar with its container's arguments and the rendered
 * gateway.toml and policy.yaml in ConfigMap-style volumes ({@code ..data} symlinks), certificates in the files
 * cert-manager writes. Then the kubelet's probes: the paths of the rendered probes answer 200 on the admin port; and
 * a ConfigMap update (the kubelet's {@code ..data} swap) is reloaded live.
 *
 * <p>What differs from a pod, and only that: each mount path is a directory under a temporary directory (every
 * occurrence of the path in the arguments and in gateway.toml is replaced), the fixed listen ports are free ports on
 * 127.0.0.1 (the rendered ones are checked against the pod's declared ports first), and Privacy Guard's Service
 * name is 127.0.0.1 (its certificate names both).
 */
class RenderedSandboxRunIT {
    static final Duration START = Duration.ofSeconds(90);

    @Test
    void theRenderedSandboxServesItsProbesAndReloadsAConfigMapSwap(@TempDir Path tmp) throws Exception {
        Rendered r = Rendered.of("overlays/production");
        Container supervisor = r.supervisorContainer();
        Container guard = r.privacyGuard().getSpec().getTemplate().getSpec().getContainers().get(0);

        // certificates, in the Secrets' file names
        Path middlewareCa = tmp.resolve("pki/middleware-ca");
        Pki.ca(middlewareCa, "middleware CA");
        Map<String, Path> secrets = new LinkedHashMap<>();
        Path interception = tmp.resolve("secrets/supervisor-interception-ca");
        Pki.ca(interception, "interception CA");
        secrets.put("supervisor-interception-ca", interception);
        Path server = tmp.resolve("secrets/privacy-guard-server");
        Pki.leaf(server, middlewareCa, "privacy-guard", "serverAuth",
                List.of("DNS:privacy-guard.openshell.svc", "IP:127.0.0.1"));
        secrets.put("privacy-guard-server", server);
        Path client = tmp.resolve("secrets/supervisor-middleware-client");
        Pki.leaf(client, middlewareCa, "openshell-supervisor", "clientAuth", List.of());
        secrets.put("supervisor-middleware-client", client);

        // Privacy Guard: its rendered command, its mount at a temporary directory, a free loopback port
        Map<String, String> guardMounts = new LinkedHashMap<>();
        for (VolumeMount m : guard.getVolumeMounts()) {
            var volume = r.privacyGuard().getSpec().getTemplate().getSpec().getVolumes().stream()
                    .filter(v -> v.getName().equals(m.getName())).findFirst().orElseThrow();
            Path dir = volume.getSecret() != null ? secrets.get(volume.getSecret().getSecretName())
                    : Files.createDirectories(tmp.resolve("pg-" + m.getName()));
            guardMounts.put(m.getMountPath(), dir.toString());
        }
        List<String> guardArgs = rewrite(guard.getArgs(), guardMounts);
        int listenAt = guardArgs.indexOf("--listen") + 1;
        assertEquals("0.0.0.0:" + guard.getPorts().get(0).getContainerPort(), guardArgs.get(listenAt));
        guardArgs.set(listenAt, "127.0.0.1:0");
        assertEquals(List.of("/opt/supervisor/bin/supervisor"), guard.getCommand());

        try (ImageProcess pg = ImageProcess.start(KubernetesManifestsIT.IMAGE, guardArgs, Map.of())) {
            Matcher listening = pg.await(Pattern.compile("^out: privacy-guard listening on [^ ]*:(\\d+)"), 0, START);
            int guardPort = Integer.parseInt(listening.group(1));

            // the sidecar's volumes: ConfigMaps laid out as the kubelet does, Secrets, emptyDirs
            Map<String, String> mounts = new LinkedHashMap<>();
            Path policyVolume = null;
            for (VolumeMount m : supervisor.getVolumeMounts()) {
                var volume = r.volume(m.getName());
                Path dir;
                if (volume.getSecret() != null) {
                    dir = secrets.get(volume.getSecret().getSecretName());
                } else {
                    dir = Files.createDirectories(tmp.resolve("volumes/" + m.getName()));
                    if (volume.getConfigMap() != null && m.getName().equals("policy")) {
                        policyVolume = dir;
                    }
                }
                mounts.put(m.getMountPath(), dir.toString());
            }
            String gatewayText = r.gatewayText();
            int adminPort = r.adminPort();
            assertTrue(gatewayText.contains("listen = \"0.0.0.0:" + adminPort + "\""));
            gatewayText = rewrite(gatewayText, mounts)
                    .replace("listen = \"127.0.0.1:3128\"", "listen = \"127.0.0.1:0\"")
                    .replace("listen = \"0.0.0.0:" + adminPort + "\"", "listen = \"127.0.0.1:0\"")
                    .replace("https://privacy-guard.openshell.svc:50051", "https://127.0.0.1:" + guardPort);
            kubeletConfigMap(Path.of(mounts.get(KubernetesManifestsIT.mountPath(supervisor, "gateway"))), "..v1",
                    Map.of("gateway.toml", gatewayText));
            String policyText = r.configMapOf("policy").getData().get("policy.yaml");
            kubeletConfigMap(policyVolume, "..v1", Map.of("policy.yaml", policyText));

            // the image's entrypoint (build-oci.sh), then the container's arguments
            List<String> args = new ArrayList<>(List.of("run", "--state-dir", "/var/lib/supervisor"));
            args.addAll(supervisor.getArgs());
            args = rewrite(args, mounts);
            Map<String, String> env = new LinkedHashMap<>();
            supervisor.getEnv().forEach(e -> env.put(e.getName(), e.getValue() == null ? "" : e.getValue()));
            env.put("SUPERVISOR_JAVA_OPTS", (env.getOrDefault("SUPERVISOR_JAVA_OPTS", "") + " -Djava.io.tmpdir="
                    + mounts.get("/tmp")).strip());

            try (ImageProcess sup = ImageProcess.start(KubernetesManifestsIT.IMAGE, args, env)) {
                sup.await(Pattern.compile("^out: supervisor listening on "), 0, START);
                Matcher admin = sup.await(Pattern.compile("admin listener on port (\\d+):"), 0, START);
                int port = Integer.parseInt(admin.group(1));
                HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
                for (var probe : List.of(supervisor.getStartupProbe(), supervisor.getReadinessProbe(),
                        supervisor.getLivenessProbe())) {
                    HttpResponse<String> res = http.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + port + probe.getHttpGet().getPath()))
                            .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
                    assertEquals(200, res.statusCode(), probe.getHttpGet().getPath() + ": " + res.body());
                }

                // a ConfigMap update as the kubelet makes it: a new ..v2, then ..data swapped in one rename
                int seen = sup.lineCount();
                String edited = policyText.replace("- { host: api.openai.com, port: 443 }",
                        "- { host: api.openai.com, port: 443 }\n      - { host: api.anthropic.com, port: 443 }");
                assertTrue(!edited.equals(policyText));
                kubeletConfigMap(policyVolume, "..v2", Map.of("policy.yaml", edited));
                sup.await(Pattern.compile("policy reloaded from "), seen, Duration.ofSeconds(60));
            }
        }
    }

    /**
     * Lays out (or updates) a ConfigMap volume as the kubelet does: the files in {@code version}/, a {@code ..data}
     * link to it replaced by one rename, and each key a link {@code KEY -> ..data/KEY}.
     */
    static void kubeletConfigMap(Path volume, String version, Map<String, String> files) throws Exception {
        Path dir = Files.createDirectories(volume.resolve(version));
        for (var f : files.entrySet()) {
            Files.writeString(dir.resolve(f.getKey()), f.getValue());
        }
        Path tmpLink = volume.resolve("..data_tmp");
        Files.deleteIfExists(tmpLink);
        Files.createSymbolicLink(tmpLink, Path.of(version));
        Files.move(tmpLink, volume.resolve("..data"), StandardCopyOption.ATOMIC_MOVE,
                StandardCopyOption.REPLACE_EXISTING);
        for (String key : files.keySet()) {
            if (!Files.isSymbolicLink(volume.resolve(key))) {
                Files.createSymbolicLink(volume.resolve(key), Path.of("..data").resolve(key));
            }
        }
    }

    static List<String> rewrite(List<String> args, Map<String, String> mounts) {
        return new ArrayList<>(args.stream().map(a -> rewrite(a, mounts)).toList());
    }

    /** Replaces each mount path (as a path prefix; longest first; in one pass) with its temporary directory. */
    static String rewrite(String text, Map<String, String> mounts) {
        List<String> paths = new ArrayList<>(mounts.keySet());
        paths.sort((a, b) -> b.length() - a.length());
        Pattern any = Pattern.compile("(" + String.join("|", paths.stream().map(Pattern::quote).toList())
                + ")(?=[/\"\\s]|$)");
        return any.matcher(text).replaceAll(m -> Matcher.quoteReplacement(mounts.get(m.group(1))));
    }
}
