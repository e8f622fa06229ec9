package dev.openshell.supervisor.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher's heap follows the memory the process may use (issue 23, "Footprint"): half of the cgroup memory limit
 * (v2 {@code memory.max} or v1 {@code memory.limit_in_bytes}), else of the machine's memory, at least 128 MiB (three
 * quarters of a limit too small for that) and at most 640 MiB, starting at 64 MiB (or the whole heap, if smaller);
 * a heap option in {@code SUPERVISOR_JAVA_OPTS} replaces the sizing. G1 grows the heap only past a fifth of the time
 * in pauses ({@code GCTimeRatio=4}) and the JVM returns the C library's free memory every 5 s (issue 41). The cgroup file system is a directory of the test's
 * ({@code SUPERVISOR_CGROUP_FS}), and the JVM reports the heap it got ({@code -XshowSettings:vm}).
 */
class LauncherMemoryIT {
    private static final Pattern HEAP = Pattern.compile("Max\\. Heap Size: ([0-9.]+)M");
    private static final Pattern INITIAL = Pattern.compile("\\bInitialHeapSize\\s+=\\s+(\\d+)");

    @TempDir
    Path cgroups;

    /** {@return {@code supervisor --version} with the test's cgroup file system and {@code javaOpts}, exit 0} */
    private Image.Run version(String javaOpts) throws Exception {
        Image.Run r = Image.run(Image.HOME, Map.of("SUPERVISOR_CGROUP_FS", cgroups.toString(),
                "SUPERVISOR_JAVA_OPTS", javaOpts), "--version");
        assertEquals(0, r.exit(), r.err());
        return r;
    }

    private double heapMib(String javaOpts) throws Exception {
        Image.Run r = version("-XshowSettings:vm " + javaOpts);
        Matcher m = HEAP.matcher(r.err() + r.out());
        assertTrue(m.find(), "no heap size reported: " + r.err());
        return Double.parseDouble(m.group(1));
    }

    private void limit(String file, String value) throws Exception {
        Path f = cgroups.resolve(file);
        Files.createDirectories(f.getParent());
        Files.writeString(f, value + "\n");
    }

    /** {@return the initial heap the JVM got, in MiB ({@code -XX:+PrintFlagsFinal})} */
    private double initialHeapMib(String javaOpts) throws Exception {
        Image.Run r = version("-XX:+PrintFlagsFinal " + javaOpts);
        Matcher m = INITIAL.matcher(r.out());
        assertTrue(m.find(), "no InitialHeapSize in the flags: " + r.err());
        return Long.parseLong(m.group(1)) / (double) (1L << 20);
    }

    @Test
    void theHeapStartsSmallAndGrowsUpToItsMaximum() throws Exception {
        limit("memory.max", String.valueOf(16L << 30)); // 16 GiB, as the launcher sees it (the JVM sees the host)
        assertEquals(640.0, heapMib(""));
        assertEquals(64.0, initialHeapMib(""));
        limit("memory.max", String.valueOf(64L << 20)); // a heap of 48 MiB (three quarters) starts whole
        assertEquals(48.0, initialHeapMib(""), "a multiple of the 4 MiB region, as the JVM keeps it");
        assertEquals(300.0, initialHeapMib("-Xms300m"), "an operator's heap flag replaces the sizing");
        assertTrue(initialHeapMib("-XX:MinHeapSize=200m") >= 200, "a minimum above 64 MiB starts (the JVM sizes it)");
    }

    /** {@return the value of the JVM flag {@code name} the launcher's JVM got ({@code -XX:+PrintFlagsFinal})} */
    private long flag(String name, String javaOpts) throws Exception {
        Image.Run r = version("-XX:+PrintFlagsFinal " + javaOpts);
        Matcher m = Pattern.compile("\\b" + name + "\\s+=\\s+(\\d+)").matcher(r.out());
        assertTrue(m.find(), "no " + name + " in the flags: " + r.err());
        return Long.parseLong(m.group(1));
    }

    @Test
    void g1GrowsTheHeapOnlyPastAFifthOfTheTimeInPausesAndFreeNativeMemoryIsReturned() throws Exception {
        limit("memory.max", String.valueOf(16L << 30));
        assertEquals(4, flag("GCTimeRatio", ""), "G1's own 12 grows the heap at 1.6 % of the time in pauses");
        assertEquals(5000, flag("TrimNativeHeapInterval", ""));
        assertEquals(12, flag("GCTimeRatio", "-XX:GCTimeRatio=12"), "the operator's options come last and win");
        assertEquals(0, flag("TrimNativeHeapInterval", "-XX:TrimNativeHeapInterval=0"));
        assertEquals(4, flag("GCTimeRatio", "-Xmx300m"), "a heap option of the operator's keeps the GC defaults");
    }

    @Test
    void aCgroupV2LimitOf512MiBGivesHalfOfItAsHeap() throws Exception {
        limit("memory.max", String.valueOf(512L << 20));
        assertEquals(256.0, heapMib(""));
    }

    @Test
    void aCgroupV1LimitIsReadWhenThereIsNoV2OneAndTheFloorHolds() throws Exception {
        limit("memory.max", "max");
        limit("memory/memory.limit_in_bytes", String.valueOf(200L << 20));
        assertEquals(128.0, heapMib(""), "half of 200 MiB is below the 128 MiB floor");
    }

    @Test
    void underAVerySmallLimitTheHeapIsThreeQuartersOfIt() throws Exception {
        limit("memory.max", String.valueOf(100_000_000L)); // 95 MiB: the 128 MiB floor would not fit
        assertEquals(71.0, heapMib(""));
    }

    @Test
    void noLimitGivesHalfTheMachineUpToTheCeiling() throws Exception {
        limit("memory/memory.limit_in_bytes", "9223372036854771712"); // cgroup v1 "no limit"
        long total = 0;
        for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith("MemTotal:")) {
                total = Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        double expected = Math.max(128, Math.min(640, total / 2 / (1L << 20)));
        assertEquals(expected, heapMib(""));
    }

    @Test
    void theOperatorsOwnHeapWins() throws Exception {
        limit("memory.max", String.valueOf(512L << 20));
        assertEquals(300.0, heapMib("-Xmx300m"));
    }

    @Test
    void anOperatorsInitialHeapAboveTheComputedOneStillStarts() throws Exception {
        limit("memory.max", String.valueOf(512L << 20)); // the launcher alone would give 256 MiB
        version("-Xms300m"); // an -Xmx256m of the launcher's would make the JVM refuse to start
    }
}
