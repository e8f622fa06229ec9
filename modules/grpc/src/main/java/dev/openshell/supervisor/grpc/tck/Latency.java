package dev.openshell.supervisor.grpc.tck;

import java.util.Arrays;

/**
 * Percentiles of a set of latencies, by the nearest-rank method (the p-th percentile is the smallest sample with at
 * least p % of the samples at or below it).
 *
 * @param p50 the median, in nanoseconds (0 for no samples)
 * @param p99 the 99th percentile, in nanoseconds (0 for no samples)
 * @param count the number of samples
 */
record Latency(long p50, long p99, int count) {
    static Latency of(long[] nanos) {
        if (nanos.length == 0) {
            return new Latency(0, 0, 0);
        }
        long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return new Latency(rank(sorted, 50), rank(sorted, 99), sorted.length);
    }

    private static long rank(long[] sorted, int percent) {
        int index = (int) Math.ceil(percent / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    /** {@return nanoseconds as milliseconds for a figure: two decimals below 10 ms, none above} */
    static String ms(long nanos) {
        double v = nanos / 1e6;
        return v < 10 ? "%.2f ms".formatted(v) : "%.0f ms".formatted(v);
    }

    /** {@return nanoseconds as milliseconds with three decimals, for the JSON report} */
    static double millis(long nanos) {
        return Math.round(nanos / 1e3) / 1e3;
    }
}
