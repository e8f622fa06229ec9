#!/usr/bin/env bash
# Measures the per-connection cost of process identification with many processes on the host (see
# IdentityLookupCost.java). Bounded: at most 20000 extra processes, each ending by itself after 600 s, killed at the
# end; at most ITERATIONS calls and 20 s per case. Needs curl and the compiled identity module (./dev.sh build, or
# ./dev.sh mvn -q -pl modules/identity -am package -DskipTests).
# IDENTITY_CLASSES (default modules/identity/target/classes) runs it against another build of the identity module
# (compiled classes with their module-info.class), so two builds can be compared on one machine.
# Usage: tests/bench/identity-lookup-cost.sh [PROCESSES [ITERATIONS]]   (defaults: 3000 200)
set -euo pipefail
cd "$(dirname "$0")/../.."
JAVA_HOME=$(scripts/find-jdk.sh)
json=$(ls ~/.m2/repository/jakarta/json/jakarta.json-api/*/jakarta.json-api-*.jar | grep -v sources | head -1)
classes=${IDENTITY_CLASSES:-modules/identity/target/classes}
cp="$classes:modules/middleware-spi/target/classes:$json"
[ -f "$classes/module-info.class" ] || { echo "build first: ./dev.sh build" >&2; exit 1; }
"$JAVA_HOME/bin/java" --module-path "$cp" --add-modules dev.openshell.supervisor.identity \
  tests/bench/IdentityLookupCost.java "$@"
