package dev.openshell.supervisor.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.openshell.middleware.spi.OriginatingProcess;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;

import org.eclipse.collections.api.factory.Lists;
import org.junit.jupiter.api.Test;

/**
 * {@link NetworkPolicy#admitsCaller}: binary scoping against the {@code binary} rows of the L7 vectors (OpenShell's
 * own tests of {@code binary_allowed}), and the cases around it.
 */
class BinaryScopeTest {
    private static final Pattern EXE = Pattern.compile("exe=(\\S+)");
    private static final Pattern ANCESTORS = Pattern.compile("ancestors=\\[([^]]*)]");

    private static NetworkPolicy policy(String... binaries) {
        return new NetworkPolicy("p", "p", Lists.immutable.empty(),
                Lists.immutable.of(binaries).collect(BinaryPattern::parse));
    }

    private static Caller process(String exe, String... ancestors) {
        return Caller.of(new OriginatingProcess(exe, 42, List.of(ancestors)));
    }

    @Test
    void theBinaryVectorsOfOpenShellHold() throws IOException {
        int rows = 0;
        for (String line : Files.readAllLines(SharedFiles.require("conformance/l7/l7-vectors.tsv"))) {
            String[] f = line.split("\t");
            if (f.length < 5 || !f[0].equals("binary")) {
                continue;
            }
            JsonObject endpoint = Json.createReader(new StringReader(f[1])).readObject();
            List<String> binaries = endpoint.getJsonArray("binaries").getValuesAs(JsonString::getString);
            Matcher exe = EXE.matcher(f[2]);
            assertTrue(exe.find(), f[2]);
            List<String> ancestors = new ArrayList<>();
            Matcher a = ANCESTORS.matcher(f[2]);
            if (a.find()) {
                ancestors.addAll(List.of(a.group(1).split(",")));
            }
            // cmdline_paths in a row are never an input: a script path grants nothing
            boolean admitted = policy(binaries.toArray(String[]::new))
                    .admitsCaller(process(exe.group(1), ancestors.toArray(String[]::new)));
            assertEquals(f[3].equals("allow"), admitted, () -> String.join(" | ", f));
            rows++;
        }
        assertEquals(10, rows, "every binary row was read");
    }

    @Test
    void unscopedPoliciesAdmitEveryone() {
        NetworkPolicy open = policy();
        assertFalse(open.binaryScoped());
        assertTrue(open.admitsCaller(new Caller.Unidentified("no socket")));
        assertTrue(open.admitsCaller(process("/usr/bin/python3")));
    }

    @Test
    void aScopedPolicyRefusesAnUnidentifiedCallerUnlessScopingIsOff() {
        NetworkPolicy curl = policy("/usr/bin/curl");
        assertFalse(curl.admitsCaller(new Caller.Unidentified("identity binding unavailable on this platform")));
        assertTrue(curl.admitsCaller(Caller.unscoped()), "endpoint-only");
        assertTrue(curl.admitsCaller(process("/usr/bin/curl", "/usr/bin/bash")));
        assertFalse(curl.admitsCaller(process("/usr/bin/python3", "/usr/bin/bash")));
    }

    @Test
    void anInterpreterMustBeListedForItsScripts() {
        // python3 running /home/u/tool.py: the process is python3; the script's path is never compared
        assertFalse(policy("/home/u/tool.py").admitsCaller(process("/usr/bin/python3.11", "/usr/bin/bash")));
        assertTrue(policy("/usr/bin/python3*").admitsCaller(process("/usr/bin/python3.11", "/usr/bin/bash")));
    }

    @Test
    void entryForNamesTheMatchingEntry() {
        NetworkPolicy p = policy("/usr/bin/curl", "/usr/local/bin/*");
        assertEquals("/usr/local/bin/*", p.entryFor("/usr/local/bin/claude").orElseThrow().source());
        assertTrue(p.entryFor("/usr/bin/wget").isEmpty());
    }
}
