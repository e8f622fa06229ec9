/**
 * JMH benchmarks of the in-process costs (issue 10, item 2): {@link dev.openshell.benchmarks.ChainAssemblyBenchmark},
 * {@link dev.openshell.benchmarks.HeaderRulesBenchmark}, {@link dev.openshell.benchmarks.RegexChainBenchmark},
 * {@link dev.openshell.benchmarks.RegexScanBenchmark} and {@link dev.openshell.benchmarks.GrpcAdapterBenchmark}; and
 * {@link dev.openshell.benchmarks.RegexCpuTime}, a plain program measuring thread CPU time (issue 37).
 */
package dev.openshell.benchmarks;
