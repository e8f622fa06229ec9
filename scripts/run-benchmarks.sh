#!/usr/bin/env bash
# Builds the benchmark module with the reactor and runs JMH on it (issue 10, item 2; docs/BENCHMARKS.md).
#
# Without arguments: all four benchmark classes (ChainAssemblyBenchmark, HeaderRulesBenchmark, RegexChainBenchmark,
# GrpcAdapterBenchmark; 37 configurations) with one fork, 2 warm-up iterations of 1 s and 3 measured iterations of
# 1 s each, results also written to tests/benchmarks/target/jmh-result.json. That takes about 3 to 4 minutes on a
# 2-core machine (plus the build: seconds when it is up to date). Run it on a quiet machine for recorded figures.
#
# With arguments: they all go to JMH (org.openjdk.jmh.Main) instead, for example
#   scripts/run-benchmarks.sh -f 1 -wi 3 -w 1s -i 5 -r 1s RegexChainBenchmark
#   scripts/run-benchmarks.sh -prof gc -p scenario=10x3-none ChainAssemblyBenchmark
#   scripts/run-benchmarks.sh -h        (JMH's own help)
# Usage: scripts/run-benchmarks.sh [JMH options] [benchmark regex...]
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=$(scripts/find-jdk.sh)
export JAVA_HOME
./mvnw -B -q -pl tests/benchmarks -am package -DskipTests
cp="$(cat tests/benchmarks/target/benchmark.classpath):$(ls tests/benchmarks/target/benchmarks-*.jar)"
if [ $# -eq 0 ]; then
  set -- -f 1 -wi 2 -w 1s -i 3 -r 1s -rf json -rff tests/benchmarks/target/jmh-result.json \
    ChainAssemblyBenchmark HeaderRulesBenchmark RegexChainBenchmark GrpcAdapterBenchmark
fi
exec "$JAVA_HOME/bin/java" -cp "$cp" org.openjdk.jmh.Main "$@"
