#!/usr/bin/env bash
# Load check for the proxy (not part of the test suite): builds the proxy module, then runs tests/load/ProxyLoad.java
# on loopback and prints req/s and p50/p99 latency direct, through the proxy, and through the proxy with a chain.
# Usage: tests/load/proxy-load.sh [seconds per run, default 5] [keep-alive clients, default 16]
set -euo pipefail
cd "$(dirname "$0")/../.."
export JAVA_HOME="${JAVA_HOME:-$(scripts/find-jdk.sh)}"
./mvnw -B -q -pl modules/proxy -am package -DskipTests
./mvnw -B -q -pl modules/proxy dependency:build-classpath -Dmdep.outputFile=target/proxy-load.classpath >/dev/null
cp="$(ls modules/proxy/target/proxy-*.jar | head -1):$(cat modules/proxy/target/proxy-load.classpath)"
exec "$JAVA_HOME/bin/java" -Djava.util.logging.config.file=/dev/null -cp "$cp" tests/load/ProxyLoad.java "${1:-5}" "${2:-16}"
