#!/usr/bin/env bash
# The first seconds after start, request by request (issue 41's cold-start line; not part of the test suite): the
# side-by-side harness's cold step (tests/data/bench-peers/run_anchors.sh COLD=1: `supervisor run` started afresh,
# POST 2 KiB on 32 connections from the moment it first answers a GET through it, no warm-up) with every request's
# start and latency recorded, so the tail can be placed in time; and the CPU each thread group of the process used by
# the end of the window (/proc/PID/task: the request carriers, the C1 and C2 compiler threads, GC, start-up).
#
# The harness's upstream (nginx, tests/data/bench-peers/conf/nginx.conf), policy (sup-policy.yaml: L7 REST rules,
# openshell/regex selected), gateway (sup-gateway.toml) and 2 KiB body (make_bodies.py), on loopback ports of its own
# (so it runs beside the harness). The client is cold-timeline/client.c (built with cc into OUT): CONNS keep-alive
# connections, one thread each, as wrk's 32 connections; CLIENT=wrk runs the harness's wrk command instead (its p99,
# no timeline).
#
# Usage: tests/load/cold-timeline.sh LABEL=IMAGE[|JAVA_OPTIONS] ...   e.g.  A=/tmp/imgA B=/tmp/imgB "C=/tmp/imgA|-Xmx1g"
#   the labels' runs are alternated (A B C A B C ...), RUNS rounds; each run is a new process (fresh start, CA kept)
# Env: RUNS=6  SECONDS_=5 (the window)  CONNS=32  CLIENT=timeline|wrk  GATEWAY=<toml> (default the harness's)
#      UPSTREAM_PORT=18090  PROXY_PORT=13190  OUT=<dir> (default target/cold-timeline/<UTC stamp>)
# Output: OUT/LABEL-N/ (lat.txt, threads.txt, sup.out/err) and a summary (cold-timeline/timeline.py) on stdout.
# Bounded: 30 s for the listening line, 15 s for the first answer, the window plus 20 s for the client; every process
# it starts is stopped by PID on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
RUNS=${RUNS:-6}
WINDOW=${SECONDS_:-5}
CONNS=${CONNS:-32}
CLIENT=${CLIENT:-timeline}
UPSTREAM_PORT=${UPSTREAM_PORT:-18090}
PROXY_PORT=${PROXY_PORT:-13190}
peers=$root/tests/data/bench-peers/conf
GATEWAY=${GATEWAY:-$peers/sup-gateway.toml}
[[ "$RUNS" =~ ^[0-9]+$ && "$RUNS" -ge 1 && "$RUNS" -le 50 ]] || { echo "RUNS must be 1..50" >&2; exit 2; }
[[ "$WINDOW" =~ ^[0-9]+$ && "$WINDOW" -ge 1 && "$WINDOW" -le 60 ]] || { echo "SECONDS_ must be 1..60" >&2; exit 2; }
[[ "$CONNS" =~ ^[0-9]+$ && "$CONNS" -ge 1 && "$CONNS" -le 1000 ]] || { echo "CONNS must be 1..1000" >&2; exit 2; }
case $CLIENT in timeline|wrk) ;; *) echo "CLIENT must be timeline or wrk" >&2; exit 2 ;; esac
[ $# -ge 1 ] || { sed -n '2,22p' "$0" >&2; exit 2; }
for p in "$UPSTREAM_PORT" "$PROXY_PORT"; do
  [ -z "$(ss -ltnH "sport = :$p")" ] || { echo "port $p is busy" >&2; exit 1; }
done
OUT=${OUT:-$root/target/cold-timeline/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT/conf" "$OUT/run" "$OUT/data"
OUT=$(cd "$OUT" && pwd)
chmod 1777 "$OUT/run"
sed -e "s/18080/$UPSTREAM_PORT/g" -e "s#/tmp/perf-anchor/run#$OUT/run#g" "$peers/nginx.conf" >"$OUT/conf/nginx.conf"
sed "s/port: 18080/port: $UPSTREAM_PORT/" "$peers/sup-policy.yaml" >"$OUT/conf/sup-policy.yaml"
sed "s/18080/$UPSTREAM_PORT/" "$peers/req.lua" >"$OUT/conf/req.lua"
python3 "$peers/make_bodies.py" "$OUT/data"
cc -O2 -pthread -o "$OUT/client" "$root/tests/load/cold-timeline/client.c"

pids=()
stop() { # PID: TERM, at most 10 s, then KILL
  local p=$1 i
  kill -TERM "$p" 2>/dev/null || return 0
  for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}
cleanup() { local i; for ((i=${#pids[@]}-1; i>=0; i--)); do stop "${pids[i]}"; done; }
trap cleanup EXIT
trap 'exit 130' INT TERM

nginx -c "$OUT/conf/nginx.conf" >"$OUT/run/nginx.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$UPSTREAM_PORT/" || true)" = 200 ] && break
  sleep 0.1
done

# one_run LABEL IMAGE JAVA_OPTIONS DIR
one_run() {
  local label=$1 image=$2 opts=$3 dir=$4 pid t0 t1= t2= code
  mkdir -p "$dir" "$OUT/run/state-$label"
  t0=$(date +%s%N)
  SUPERVISOR_JAVA_OPTS="$opts" "$image/bin/supervisor" run --policy "$OUT/conf/sup-policy.yaml" \
    --gateway-config "$GATEWAY" --listen "127.0.0.1:$PROXY_PORT" --state-dir "$OUT/run/state-$label" \
    --audit-log "$dir/audit.jsonl" --admin-listen 127.0.0.1:0 >"$dir/sup.out" 2>"$dir/sup.err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 3000); do
    if grep -q 'listening on' "$dir/sup.out" 2>/dev/null; then t1=$(date +%s%N); break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  for _ in $(seq 1 150); do   # the harness's wait_ok: a GET through the proxy
    code=$(curl -s -m 2 -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$PROXY_PORT" \
      "http://127.0.0.1:$UPSTREAM_PORT/" 2>/dev/null || true)
    if [ "$code" = 200 ]; then t2=$(date +%s%N); break; fi
    sleep 0.1
  done
  if [ -z "$t2" ]; then
    echo "$label: no answer (see $dir/sup.err)" >&2
  elif [ "$CLIENT" = wrk ]; then
    REQ_PATH="http://127.0.0.1:$UPSTREAM_PORT/" BODY_FILE="$OUT/data/body_2k.json" timeout $((WINDOW + 20)) \
      wrk -t2 -c"$CONNS" -d"${WINDOW}s" --timeout 5s --latency -s "$OUT/conf/req.lua" \
      "http://127.0.0.1:$PROXY_PORT/" >"$dir/wrk.txt" 2>&1 || true
  else
    timeout $((WINDOW + 20)) "$OUT/client" "$PROXY_PORT" "$UPSTREAM_PORT" "$OUT/data/body_2k.json" "$CONNS" "$WINDOW" \
      "$dir/lat.txt" 2>"$dir/client.txt" || true
  fi
  # CPU (clock ticks) per thread group: names with their numbers removed
  for t in /proc/"$pid"/task/*; do
    { read -r n <"$t/comm"; read -r s <"$t/stat"; } 2>/dev/null || continue
    s=${s##*) }; set -- $s
    echo "$n=$((${12} + ${13}))"
  done | awk -F= '{n=$1; sub(/[0-9#-]+$/, "", n); c[n]+=$2} END{for (k in c) printf "%s=%d\n", k, c[k]}' >"$dir/threads.txt"
  echo "ready_ms=$(( (${t1:-$t0} - t0) / 1000000 )) first_answer_ms=$(( (${t2:-$t0} - t0) / 1000000 ))" \
    "load=$(cut -d' ' -f1 /proc/loadavg) ticks_per_s=$(getconf CLK_TCK)" >"$dir/meta.txt"
  stop "$pid"
  unset 'pids[-1]'
  rm -f "$dir/audit.jsonl"
}

for run in $(seq 1 "$RUNS"); do
  for spec in "$@"; do
    label=${spec%%=*} rest=${spec#*=}
    image=${rest%%|*} opts=
    [ "$rest" != "$image" ] && opts=${rest#*|}
    [ -x "$image/bin/supervisor" ] || { echo "$label: no image at $image" >&2; exit 1; }
    one_run "$label" "$image" "$opts" "$OUT/$label-$run"
    echo "[$(date -u +%T)] $label-$run $(cat "$OUT/$label-$run/meta.txt") $(cat "$OUT/$label-$run/client.txt" 2>/dev/null)" >&2
  done
done
python3 "$root/tests/load/cold-timeline/timeline.py" "$OUT" "$@"
