#!/usr/bin/env bash
# Measures the added latency of one external middleware stage (p50, p99) on loopback: Privacy Guard from the runtime
# image as its own process, called through GrpcMiddlewareProvider. Bounded: at most 3000 calls or 30 s per case.
# Needs the image: ./dev.sh build
# Usage: tests/bench/external-stage-latency.sh [CASE_PREFIX [MAX_CALLS]]
#   CASE_PREFIX: only the cases whose name starts with it ("2 KiB": the 2 KiB cases, about 20 s); MAX_CALLS: at most
#   this many measured calls per case (default 3000 for 2 KiB, fewer for larger bodies).
set -euo pipefail
cd "$(dirname "$0")/../.."
JAVA_HOME=$(scripts/find-jdk.sh)
image=jlink/target/image
modules=jlink/target/modules
[ -x "$image/bin/supervisor" ] || { echo "build the image first: ./dev.sh build" >&2; exit 1; }
out=$(mktemp)
"$image/bin/supervisor" privacy-guard --listen 127.0.0.1:0 >"$out" 2>/dev/null &
pg=$!
trap 'kill $pg 2>/dev/null; wait $pg 2>/dev/null || true; rm -f "$out"' EXIT
for _ in $(seq 1 600); do
  grep -q 'listening on' "$out" && break
  kill -0 $pg 2>/dev/null || { echo "privacy-guard exited" >&2; exit 1; }
  sleep 0.1
done
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out")
[ -n "$port" ] || { echo "privacy-guard did not report its port" >&2; exit 1; }
echo "privacy-guard pid $pg on 127.0.0.1:$port; $(nproc) CPU(s); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$JAVA_HOME/bin/java" -Djava.util.logging.config.file=/dev/null --enable-native-access=io.grpc.netty.shaded \
  --module-path "$modules" \
  --add-modules dev.openshell.supervisor.grpc,org.eclipse.parsson \
  --add-exports dev.openshell.supervisor.engine/dev.openshell.supervisor.engine=ALL-UNNAMED \
  tests/bench/ExternalStageLatency.java "$port" "$@"
