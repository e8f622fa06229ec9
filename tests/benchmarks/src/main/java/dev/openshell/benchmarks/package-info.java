/** JMH benchmarks: {@link dev.openshell.benchmarks.RegexChainBenchmark}. */
package dev.openshell.benchmarks;
