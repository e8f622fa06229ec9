#!/usr/bin/env bash
# Builds the benchmark module with the reactor and runs JMH on it. Arguments go to JMH (org.openjdk.jmh.Main);
# without arguments it runs the recorded configuration of docs/BENCHMARKS.md.
# Usage: scripts/run-benchmarks.sh [JMH options] [benchmark regex]
set -euo pipefail
cd "$(dirname "$0")/.."
JAVA_HOME=$(scripts/find-jdk.sh)
export JAVA_HOME
./mvnw -B -q -pl tests/benchmarks -am package -DskipTests
cp="$(cat tests/benchmarks/target/benchmark.classpath):$(ls tests/benchmarks/target/benchmarks-*.jar)"
if [ $# -eq 0 ]; then
  set -- -f 1 -wi 3 -w 1s -i 5 -r 1s RegexChainBenchmark
fi
exec "$JAVA_HOME/bin/java" -cp "$cp" org.openjdk.jmh.Main "$@"
