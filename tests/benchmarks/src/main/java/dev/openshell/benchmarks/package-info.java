/**
 * JMH benchmarks of the in-process costs (issue 10, item 2): {@link dev.openshell.benchmarks.ChainAssemblyBenchmark},
 * {@link dev.openshell.benchmarks.HeaderRulesBenchmark}, {@link dev.openshell.benchmarks.RegexChainBenchmark} and
 * {@link dev.openshell.benchmarks.GrpcAdapterBenchmark}.
 */
package dev.openshell.benchmarks;
