package dev.openshell.supervisor.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.KeyToPath;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.tomlj.Toml;
import org.tomlj.TomlParseResult;

/**
 * deploy/kubernetes without a cluster: every Kustomize directory renders with {@code kubectl kustomize} and every
 * document it renders is valid against the Kubernetes API types ({@link ApiSchema}: known kinds, no unknown field,
 * no coerced scalar); the sandbox pod of the production overlay wires the proxy, the CA trust, the probes and the
 * resources as docs/deployment.md says, and uses the image {@code ./dev.sh container} builds.
 */
class KubernetesManifestsIT {
    static final String IMAGE = System.getProperty("deploy.image", "../jlink/target/image");
    static final String VERSION = System.getProperty("deploy.version", "0.1.0-SNAPSHOT");
    /** The resident-size peak docs/BENCHMARKS.md measured (128 concurrent 1 MiB uploads through a chain). */
    static final long MEASURED_PEAK_RSS = 749L << 20;

    static List<String> directories() throws IOException {
        return Kustomize.directories();
    }

    @ParameterizedTest
    @MethodSource("directories")
    void everyRenderedDocumentIsAKnownApiTypeWithoutUnknownFields(String dir) throws Exception {
        List<Map<String, Object>> docs = Kustomize.render(dir);
        assertFalse(docs.isEmpty(), dir + " rendered nothing");
        List<String> problems = new ArrayList<>();
        for (Map<String, Object> doc : docs) {
            try {
                HasMetadata r = ApiSchema.validate(doc);
                if (dir.startsWith("overlays/") && !"Namespace".equals(r.getKind())) {
                    assertEquals("openshell", r.getMetadata().getNamespace(), dir + ": " + r.getKind() + "/"
                            + r.getMetadata().getName() + " is outside the namespace the certificates name");
                }
            } catch (IllegalArgumentException e) {
                problems.add(e.getMessage());
            }
        }
        assertEquals(List.of(), problems, dir);
    }

    @Test
    void theValidatorRefusesUnknownFieldsCoercedScalarsAndUnknownKinds() throws Exception {
        Map<String, Object> good = deploymentDocument(1, "name");
        assertEquals("Deployment", ApiSchema.validate(good).getKind());

        IllegalArgumentException typo = assertThrows(IllegalArgumentException.class,
                () -> ApiSchema.validate(deploymentDocument(1, "nmae")));
        assertTrue(typo.getMessage().contains(".spec.template.spec.containers[0].nmae"), typo.getMessage());

        IllegalArgumentException string = assertThrows(IllegalArgumentException.class,
                () -> ApiSchema.validate(deploymentDocument("2", "name")));
        assertTrue(string.getMessage().startsWith("Deployment/d:"), string.getMessage());

        Map<String, Object> crd = new LinkedHashMap<>(Map.of("apiVersion", "example.com/v1", "kind", "Widget",
                "metadata", Map.of("name", "w")));
        IllegalArgumentException unknownKind = assertThrows(IllegalArgumentException.class,
                () -> ApiSchema.validate(crd));
        assertTrue(unknownKind.getMessage().contains("no schema"), unknownKind.getMessage());

        // a custom resource checked too: a misspelt cert-manager field
        Map<String, Object> cert = new LinkedHashMap<>(Map.of("apiVersion", "cert-manager.io/v1",
                "kind", "Certificate", "metadata", Map.of("name", "c"),
                "spec", Map.of("secretName", "s", "issuerRef", Map.of("name", "i"), "dnsName", List.of("a"))));
        IllegalArgumentException certTypo = assertThrows(IllegalArgumentException.class,
                () -> ApiSchema.validate(cert));
        assertTrue(certTypo.getMessage().contains(".spec.dnsName"), certTypo.getMessage());
    }

    private static Map<String, Object> deploymentDocument(Object replicas, String nameKey) {
        Map<String, Object> container = new LinkedHashMap<>();
        container.put(nameKey, "c");
        container.put("image", "i");
        return new LinkedHashMap<>(Map.of("apiVersion", "apps/v1", "kind", "Deployment",
                "metadata", Map.of("name", "d"),
                "spec", Map.of("replicas", replicas, "selector", Map.of("matchLabels", Map.of("a", "b")),
                        "template", Map.of("metadata", Map.of("labels", Map.of("a", "b")),
                                "spec", Map.of("containers", List.of(container))))));
    }

    @Test
    void theSandboxPodWiresProxyCaTrustProbesAndResources(@TempDir Path tmp) throws Exception {
        Rendered r = Rendered.of("overlays/production");
        PodSpec pod = r.sandbox().getSpec().getTemplate().getSpec();
        Container supervisor = r.supervisorContainer();
        Container agent = pod.getContainers().stream().filter(c -> c.getName().equals("agent")).findFirst()
                .orElseThrow();

        // a native sidecar: an init container that keeps running
        assertEquals("Always", supervisor.getRestartPolicy());
        // the image ./dev.sh container builds: tagged with the project version (the OCI archive's tag)
        assertEquals("registry.example.com/openshell/supervisor:" + VERSION, supervisor.getImage());
        OciArchive.tag().ifPresent(tag -> assertEquals(tag, VERSION, "the OCI archive's tag"));

        // the gateway configuration the supervisor reads: listen addresses
        TomlParseResult gateway = r.gatewayToml();
        String listen = gateway.getString("openshell.supervisor.listen");
        String admin = gateway.getString("openshell.supervisor.admin.listen");
        assertEquals("127.0.0.1:3128", listen, "the proxy on the pod's loopback only");
        int adminPort = Integer.parseInt(admin.substring(admin.lastIndexOf(':') + 1));

        // probes: on the admin listener's port, at the paths the admin listener serves
        ContainerPort adminContainerPort = supervisor.getPorts().stream()
                .filter(p -> "admin".equals(p.getName())).findFirst().orElseThrow();
        assertEquals(adminPort, adminContainerPort.getContainerPort());
        Map<String, HTTPGetAction> probes = Map.of(
                "/health/ready", supervisor.getStartupProbe().getHttpGet(),
                "/health/ready ", supervisor.getReadinessProbe().getHttpGet(),
                "/health/live", supervisor.getLivenessProbe().getHttpGet());
        probes.forEach((path, get) -> {
            assertEquals(path.strip(), get.getPath());
            assertEquals("admin", get.getPort().getStrVal());
        });

        // the agent: every proxy variable names the supervisor's listener
        Map<String, String> env = agent.getEnv().stream()
                .collect(Collectors.toMap(EnvVar::getName, e -> e.getValue() == null ? "" : e.getValue()));
        for (String name : List.of("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")) {
            assertEquals("http://" + listen, env.get(name), name);
        }
        assertEquals("", env.get("NO_PROXY"), "nothing bypasses the supervisor");

        // CA trust: the agent mounts the interception CA's certificate only, never its key ...
        VolumeMount caMount = agent.getVolumeMounts().stream().filter(m -> m.getName().equals("agent-ca"))
                .findFirst().orElseThrow();
        Volume caVolume = r.volume("agent-ca");
        assertEquals("supervisor-interception-ca", caVolume.getSecret().getSecretName());
        List<KeyToPath> items = caVolume.getSecret().getItems();
        assertEquals(List.of("tls.crt"), items.stream().map(KeyToPath::getKey).toList());
        for (Container c : pod.getContainers()) {
            for (VolumeMount m : c.getVolumeMounts()) {
                assertFalse(m.getName().equals("interception-ca"), c.getName() + " mounts the CA key");
            }
        }
        // ... and the supervisor signs with that CA (the Secret's tls.crt/tls.key where gateway.toml reads them)
        String caDir = mountPath(supervisor, "interception-ca");
        assertEquals("supervisor-interception-ca", r.volume("interception-ca").getSecret().getSecretName());
        assertEquals(caDir + "/tls.crt", gateway.getString("openshell.supervisor.tls.ca_cert"));
        assertEquals(caDir + "/tls.key", gateway.getString("openshell.supervisor.tls.ca_key"));
        // the trust variables are what `supervisor ca export --format env` prints for that path
        String caPath = caMount.getMountPath() + "/" + items.get(0).getPath();
        Map<String, String> exported = caExportEnv(tmp, caPath);
        assertFalse(exported.isEmpty());
        exported.forEach((name, value) -> assertEquals(value, env.get(name), name));

        // resources: requested, and a memory limit above the measured peak (the launcher's -Xmx640m included)
        Map<String, Quantity> limits = supervisor.getResources().getLimits();
        Map<String, Quantity> requests = supervisor.getResources().getRequests();
        assertNotNull(requests.get("cpu"));
        assertNotNull(requests.get("memory"));
        BigDecimal memoryLimit = limits.get("memory").getNumericalAmount();
        assertTrue(memoryLimit.compareTo(BigDecimal.valueOf(MEASURED_PEAK_RSS)) > 0,
                "memory limit " + limits.get("memory") + " is under the measured peak of 749 MiB");
        assertTrue(requests.get("memory").getNumericalAmount().compareTo(memoryLimit) < 0);

        // hardening: not root, read-only root filesystem, no capabilities, a user apart from the agent's
        var sc = supervisor.getSecurityContext();
        assertEquals(65532L, sc.getRunAsUser());
        assertTrue(sc.getReadOnlyRootFilesystem());
        assertEquals(List.of("ALL"), sc.getCapabilities().getDrop());
        assertFalse(sc.getAllowPrivilegeEscalation());
        assertTrue(agent.getSecurityContext().getRunAsUser() != 65532L);

        // the policy is reloaded live: mounted as a directory (the kubelet updates those, never subPath mounts),
        // from a ConfigMap without a hash suffix
        VolumeMount policyMount = supervisor.getVolumeMounts().stream().filter(m -> m.getName().equals("policy"))
                .findFirst().orElseThrow();
        assertEquals(null, policyMount.getSubPath());
        assertEquals("sandbox-policy", r.volume("policy").getConfigMap().getName());
        List<String> args = supervisor.getArgs();
        assertEquals(policyMount.getMountPath() + "/policy.yaml", args.get(args.indexOf("--policy") + 1));
    }

    @Test
    void thePrometheusOverlaysScrapeTheAdminPort() throws Exception {
        Rendered prod = Rendered.of("overlays/production");
        Map<String, String> annotations = prod.sandbox().getSpec().getTemplate().getMetadata().getAnnotations();
        assertEquals("true", annotations.get("prometheus.io/scrape"));
        assertEquals(String.valueOf(prod.adminPort()), annotations.get("prometheus.io/port"));
        assertEquals("/metrics", annotations.get("prometheus.io/path"));

        Rendered op = Rendered.of("overlays/prometheus-operator");
        var monitor = (io.fabric8.openshift.api.model.monitoring.v1.PodMonitor) op.resources.stream()
                .filter(x -> x.getKind().equals("PodMonitor")).findFirst().orElseThrow();
        assertEquals("admin", monitor.getSpec().getPodMetricsEndpoints().get(0).getPort());
        assertEquals(op.sandbox().getSpec().getTemplate().getMetadata().getLabels().get("app.kubernetes.io/component"),
                monitor.getSpec().getSelector().getMatchLabels().get("app.kubernetes.io/component"));
    }

    @Test
    void theEgressLockRunsFirstAndLetsOnlyTheSupervisorsUidOut() throws Exception {
        Rendered r = Rendered.of("overlays/egress-lock");
        List<Container> init = r.sandbox().getSpec().getTemplate().getSpec().getInitContainers();
        assertEquals(List.of("egress-lock", "supervisor"), init.stream().map(Container::getName).toList());
        Container lock = init.get(0);
        assertEquals(null, lock.getRestartPolicy(), "a plain init container: done before the sidecar starts");
        String script = String.join("\n", lock.getArgs());
        long uid = r.supervisorContainer().getSecurityContext().getRunAsUser();
        assertTrue(script.contains("--uid-owner " + uid + " -j ACCEPT"), script);
        assertTrue(script.strip().endsWith("done") && script.contains("-A OUTPUT -j REJECT"), script);
        assertEquals(List.of("NET_ADMIN", "NET_RAW"), lock.getSecurityContext().getCapabilities().getAdd());
    }

    static String mountPath(Container c, String volume) {
        return c.getVolumeMounts().stream().filter(m -> m.getName().equals(volume)).findFirst().orElseThrow()
                .getMountPath();
    }

    /** {@code supervisor ca export --format env} for a CA at {@code caPath}: NAME to value, Java's line left out. */
    static Map<String, String> caExportEnv(Path tmp, String caPath) throws Exception {
        Path out = tmp.resolve("ca-export.env");
        Process p = new ProcessBuilder(IMAGE + "/bin/supervisor", "ca", "export", "--state-dir",
                tmp.resolve("state").toString(), "--format", "env", "--ca-path", caPath, "--bundle-path", caPath)
                .redirectOutput(out.toFile()).redirectError(tmp.resolve("ca-export.err").toFile()).start();
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "ca export timed out");
        assertEquals(0, p.exitValue(), Files.readString(tmp.resolve("ca-export.err")));
        Map<String, String> env = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^export ([A-Za-z_]+)=(.*)$").matcher(Files.readString(out));
        while (m.find()) {
            if (!m.group(1).equals("JAVA_TOOL_OPTIONS")) { // needs a PKCS#12 file: docs/deployment.md
                env.put(m.group(1), m.group(2));
            }
        }
        return env;
    }

    /** One rendered directory, validated, with lookups. */
    record Rendered(List<HasMetadata> resources) {
        static Rendered of(String dir) throws Exception {
            return new Rendered(Kustomize.render(dir).stream().map(ApiSchema::validate).toList());
        }

        <T extends HasMetadata> T named(Class<T> type, String name) {
            return resources.stream().filter(type::isInstance).map(type::cast)
                    .filter(x -> x.getMetadata().getName().equals(name)).findFirst()
                    .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
        }

        Deployment sandbox() {
            return named(Deployment.class, "agent-sandbox");
        }

        Deployment privacyGuard() {
            return named(Deployment.class, "privacy-guard");
        }

        Container supervisorContainer() {
            return sandbox().getSpec().getTemplate().getSpec().getInitContainers().stream()
                    .filter(c -> c.getName().equals("supervisor")).findFirst().orElseThrow();
        }

        Volume volume(String name) {
            return sandbox().getSpec().getTemplate().getSpec().getVolumes().stream()
                    .filter(v -> v.getName().equals(name)).findFirst().orElseThrow();
        }

        ConfigMap configMapOf(String volume) {
            return named(ConfigMap.class, volume(volume).getConfigMap().getName());
        }

        String gatewayText() {
            return configMapOf("gateway").getData().get("gateway.toml");
        }

        TomlParseResult gatewayToml() {
            TomlParseResult toml = Toml.parse(gatewayText());
            assertEquals(List.of(), toml.errors());
            return toml;
        }

        int adminPort() {
            String admin = gatewayToml().getString("openshell.supervisor.admin.listen");
            return Integer.parseInt(admin.substring(admin.lastIndexOf(':') + 1));
        }
    }

    /** The OCI archive's tag, when ./dev.sh container built one. */
    static final class OciArchive {
        static Optional<String> tag() {
            Path archive = Path.of(System.getProperty("deploy.oci.archive", "../jlink/target/oci/supervisor.tar"));
            if (!Files.isRegularFile(archive)) {
                return Optional.empty();
            }
            try {
                Process p = new ProcessBuilder("tar", "-xOf", archive.toString(), "./index.json").start();
                String index = new String(p.getInputStream().readAllBytes());
                p.waitFor();
                Matcher m = Pattern.compile("\"org.opencontainers.image.ref.name\":\"([^\"]+)\"").matcher(index);
                return m.find() ? Optional.of(m.group(1)) : Optional.empty();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
    }
}
