#!/usr/bin/env bash
# Response middleware under load through `supervisor run` from the runtime image (not part of the test suite): a GET
# answered with 2 bytes and a GET answered with a 1 MiB download (JSON-like text with a Content-Length, from
# tests/load/LoadUpstream.java) through three configurations on one supervisor, one host each:
#   none.test    no response stage (no middleware at all)
#   inproc.test  one in-process response stage: openshell/regex-response, mode redact, fail_closed
#   grpc.test    one gRPC response stage: Privacy Guard's examples/privacy-guard-response (`supervisor privacy-guard`
#                from the image, its own process on loopback, plaintext), fail_closed
# then the SSE first-event delay through the same three hosts (tests/load/SseFirstEvent.java, same JVM clock for the
# upstream's send and the client's receipt).
# Each configuration is warmed up first; then the runs alternate none, in-process, gRPC, none, ... for ROUNDS rounds,
# and every run prints the 1-minute load average at its end. Processes it starts are stopped on exit.
# Needs wrk (Debian package; installed if missing and run as root) and the image (built if missing).
# Usage: tests/load/response-load.sh [seconds per run, default 10] [rounds, default 3] [connections, default 8]
#   SSE_SAMPLES (default 100): first events per host, shape and round; SSE_WARMUP (default 50) per host and shape.
# Every run is reported with its error count rather than stopping the script (ALLOW_ERRORS=1 for tests/load/load-lib.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
rounds=${2:-3}
conns=${3:-8}
max=2000000
threads=2
if ! [[ "$seconds" =~ ^[0-9]+$ && "$seconds" -ge 1 && "$seconds" -le 120 ]]; then
  echo "seconds must be 1..120" >&2
  exit 2
fi
if ! [[ "$rounds" =~ ^[0-9]+$ && "$rounds" -ge 1 && "$rounds" -le 20 ]]; then
  echo "rounds must be 1..20" >&2
  exit 2
fi
if ! [[ "$conns" =~ ^[0-9]+$ && "$conns" -ge $threads && "$conns" -le 1000 ]]; then
  echo "connections must be $threads..1000" >&2
  exit 2
fi
. tests/load/load-lib.sh
load_setup
ALLOW_ERRORS=1

"$JAVA_HOME/bin/java" tests/load/LoadUpstream.java >"$work/small.out" 2>&1 &
pids+=($!)
"$JAVA_HOME/bin/java" tests/load/LoadUpstream.java 1048576 >"$work/big.out" 2>&1 &
pids+=($!)
mkfifo "$work/sse.in"
"$JAVA_HOME/bin/java" tests/load/SseFirstEvent.java "${SSE_SAMPLES:-100}" "$rounds" "${SSE_WARMUP:-50}" \
  none.test inproc.test grpc.test <"$work/sse.in" >"$work/sse.out" 2>&1 &
pids+=($!)
exec 3>"$work/sse.in"
"$image/bin/supervisor" privacy-guard --listen 127.0.0.1:0 >"$work/pg.out" 2>"$work/pg.err" &
pids+=($!)
small=$(await_port "$work/small.out" 'upstream listening on 127\.0\.0\.1:[0-9]+')
big=$(await_port "$work/big.out" 'upstream listening on 127\.0\.0\.1:[0-9]+')
sse=$(await_port "$work/sse.out" 'sse upstream listening on 127\.0\.0\.1:[0-9]+')
pg=$(await_port "$work/pg.out" 'listening on 127\.0\.0\.1:[0-9]+')

cat >"$work/policy.yaml" <<YAML
version: 1
network_policies:
  load:
    name: response load check
    endpoints:
      - { host: none.test, ports: [$small, $big, $sse] }
      - { host: inproc.test, ports: [$small, $big, $sse] }
      - { host: grpc.test, ports: [$small, $big, $sse] }
network_middlewares:
  inproc:
    middleware: openshell/regex-response
    order: 10
    on_error: fail_closed
    config: { mode: redact }
    endpoints: { include: [inproc.test] }
  grpc:
    middleware: examples/privacy-guard-response
    order: 20
    on_error: fail_closed
    endpoints: { include: [grpc.test] }
YAML
cat >"$work/gateway.toml" <<TOML
[openshell.supervisor.network]
allow_loopback_upstreams = true
[openshell.supervisor.network.static_hosts]
"none.test" = "127.0.0.1"
"inproc.test" = "127.0.0.1"
"grpc.test" = "127.0.0.1"

[[openshell.supervisor.middleware]]
name = "privacy-guard"
grpc_endpoint = "http://127.0.0.1:$pg"
max_body_bytes = 4194304
timeout = "5s"
allow_insecure = true
TOML
start_supervisor "$work/policy.yaml" "$work/gateway.toml"

configs=(none inproc grpc)
for c in "${configs[@]}"; do
  wrk_script GET "http://$c.test:$small/" "$c.test:$small" "" >"$work/get-$c.lua"
  wrk_script GET "http://$c.test:$big/" "$c.test:$big" "" >"$work/mib-$c.lua"
done
# the download is checked per configuration: 1 MiB arrives (nothing in it is a secret or PII); on a loaded machine a
# stage can pass its timeout (in-process: 500 ms unless the binding sets one), so each gets three tries
for c in "${configs[@]}"; do
  for try in 1 2 3; do
    got=$(curl -s -o "$work/download" -w '%{http_code} %{size_download}' -x "http://127.0.0.1:$proxy" \
      "http://$c.test:$big/")
    [ "$got" = "200 1048576" ] && break
    echo "$c: the 1 MiB download answered '$got': $(head -c 300 "$work/download")" >&2
    [ "$try" -lt 3 ] || exit 1
  done
done

echo "response load check: ${seconds} s per run, ${rounds} rounds, ${conns} keep-alive connections, ${threads} wrk" \
  "threads, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
for c in "${configs[@]}"; do
  measure "warm-up GET $c" "http://127.0.0.1:$proxy" "$work/get-$c.lua" 5 >/dev/null
  measure "warm-up 1 MiB $c" "http://127.0.0.1:$proxy" "$work/mib-$c.lua" 5 >/dev/null
done
run() { # name, script: one measured run and the 1-minute load average at its end
  local line
  line=$(measure "$1" "http://127.0.0.1:$proxy" "$2" "$seconds")
  printf '%s   load %s\n' "$line" "$(cut -d' ' -f1 /proc/loadavg)"
}
for round in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    run "GET, $c, round $round" "$work/get-$c.lua"
  done
  for c in "${configs[@]}"; do
    run "1 MiB, $c, round $round" "$work/mib-$c.lua"
  done
done
stage_times() { # config, port, label: the stage's own time from its audit events (latency_us), and any failures
  local events lat n
  events=$(cat "$work"/audit/audit.jsonl* | grep "\"config_key\":\"$1\"" | grep "\"port\":$2[,}]" || true)
  [ -n "$events" ] || { echo "  $1, $3: no stage event"; return 0; }
  lat=$(grep -o '"latency_us":[0-9]*' <<<"$events" | cut -d: -f2 | sort -n)
  n=$(wc -l <<<"$lat")
  printf '  %s, %s: %d stage invocations, own time p50 %.3f ms, p99 %.3f ms; decisions: %s\n' "$1" "$3" "$n" \
    "$(sed -n "$(((n + 1) / 2))p" <<<"$lat")e-3" "$(sed -n "$(((n * 99 + 99) / 100))p" <<<"$lat")e-3" \
    "$(grep -o '"decision":"[^"]*"' <<<"$events" | cut -d'"' -f4 | sort | uniq -c | xargs || true)"
}
echo "audit log: each stage's own time (its latency_us), whole run including warm-ups:"
for c in inproc grpc; do
  stage_times "$c" "$small" "GET"
  stage_times "$c" "$big" "1 MiB"
done
echo "audit log: reason codes (count, code): $(cat "$work"/audit/audit.jsonl* | grep -o '"reason_code":"[^"]*"' \
  | cut -d'"' -f4 | sort | uniq -c | xargs || true)"

echo "SSE first-event delay (${SSE_SAMPLES:-100} samples per host, shape and round):"
echo "$proxy" >&3
exec 3>&-
wait "${pids[2]}" || { cat "$work/sse.out" >&2; exit 1; }
grep -v '^sse upstream listening' "$work/sse.out"
