package dev.openshell.supervisor.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.openshell.supervisor.deploy.KubernetesManifestsIT.Rendered;
import io.fabric8.kubernetes.api.model.Container;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The egress-lock overlay's rules, as rendered, run by a real kernel: egress-lock-check.sh (test resources) makes
 * two new, empty network namespaces joined by a veth pair ("pod" and "outside": nothing leaves this machine),
 * installs the rendered script in the pod, and opens TCP connections as the agent's and the supervisor's UIDs.
 * Needs root, unshare, nsenter, setpriv, ip and iptables (CI has them); skipped otherwise.
 */
class EgressLockIT {
    @Test
    void onlyTheSupervisorsUidLeavesThePodAndProbesStillAnswer(@TempDir Path tmp) throws Exception {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "network namespaces need root");
        for (String tool : List.of("unshare", "nsenter", "setpriv", "ip", "iptables", "ip6tables")) {
            Assumptions.assumeTrue(onPath(tool), tool + " is not installed");
        }
        Rendered r = Rendered.of("overlays/egress-lock");
        var pod = r.sandbox().getSpec().getTemplate().getSpec();
        Container lock = pod.getInitContainers().get(0);
        long supervisorUid = r.supervisorContainer().getSecurityContext().getRunAsUser();
        long agentUid = pod.getContainers().stream().filter(c -> c.getName().equals("agent")).findFirst()
                .orElseThrow().getSecurityContext().getRunAsUser();
        assertEquals(List.of("/bin/sh", "-ec"), lock.getCommand());
        Path rules = Files.writeString(tmp.resolve("rules.sh"), String.join("\n", lock.getArgs()));
        Path script = tmp.resolve("egress-lock-check.sh");
        try (var in = EgressLockIT.class.getResourceAsStream("/egress-lock-check.sh")) {
            Files.copy(in, script);
        }
        Path out = tmp.resolve("out.txt");
        Path err = tmp.resolve("err.txt");
        Process p = new ProcessBuilder("bash", script.toString(), rules.toString(),
                KubernetesManifestsIT.IMAGE + "/bin/jwebserver", String.valueOf(supervisorUid),
                String.valueOf(agentUid))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        p.getOutputStream().close();
        if (!p.waitFor(240, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("egress-lock-check.sh took more than 240 s: " + Files.readString(err));
        }
        assertEquals(0, p.exitValue(), Files.readString(err));
        Map<String, String> checks = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^CHECK (\\S+) (open|closed)$").matcher(Files.readString(out));
        while (m.find()) {
            checks.put(m.group(1), m.group(2));
        }
        assertEquals(Map.of(
                "agent-to-outside", "closed",
                "other-uid-to-outside", "closed",
                "supervisor-to-outside", "open",
                "agent-to-supervisor-on-loopback", "open",
                "outside-to-admin-port", "open"), checks, Files.readString(out));
    }

    private static boolean onPath(String tool) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (Files.isExecutable(Path.of(dir, tool))) {
                return true;
            }
        }
        return Files.isExecutable(Path.of("/usr/sbin", tool)) || Files.isExecutable(Path.of("/sbin", tool));
    }
}
