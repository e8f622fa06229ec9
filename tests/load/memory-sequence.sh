#!/usr/bin/env bash
# Resident memory of `supervisor run` under the side-by-side harness's sequence (issue 41), not part of the test suite:
# the harness's upstream (nginx, tests/data/bench-peers/conf/nginx.conf), policy (sup-policy.yaml: L7 REST rules,
# openshell/regex selected), request bodies (make_bodies.py) and wrk script (req.lua), on free loopback ports of its
# own (so it runs beside the harness), then the harness's windows in its order: WARMUP s of warm-up (half GET, half
# POST 2 KiB, 32 connections), GET at 32 and 128 connections, POST 2 KiB at 32 and 128, DURATION s each.
# Prints one line per window: req/s, p99 (ms), peak RSS (MiB; sampled every 0.5 s, as the harness does, with its
# anonymous and file-backed parts at that peak), the process's CPU (ms) per 1,000 requests, and the GC pauses of the
# window (count and total ms, from the JVM's -Xlog:gc, which this script adds with gc+ergo+heap: why the heap grew).
# With NMT=1 it adds -XX:NativeMemoryTracking=summary and writes `jcmd VM.native_memory summary`, `GC.heap_info` and
# /proc/PID/smaps after each window.
# The JVM options are the launcher's own plus SUPERVISOR_JAVA_OPTS (as set by the caller).
# COLD=N (default 0: none) first measures N s of POST 2 KiB at 32 connections from the moment the supervisor is ready
# (as the harness's cold step), and prints the CPU its JIT compiler threads, GC threads and the rest used by then; the
# same split over the whole run is printed at the end.
# Env: IMAGE (default jlink/target/image), WARMUP (20), DURATION (6), OUT (a new temporary directory; kept, with the
# GC log, the supervisor's output and the samples), NMT (0).
# Bounded: each wrk run lasts its window (with a timeout of 20 s more); every process it starts is stopped on exit.
# Usage: tests/load/memory-sequence.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
WARMUP=${WARMUP:-20}
DURATION=${DURATION:-6}
[[ "$WARMUP" =~ ^[0-9]+$ && "$WARMUP" -ge 2 && "$WARMUP" -le 300 ]] || { echo "WARMUP must be 2..300" >&2; exit 2; }
[[ "$DURATION" =~ ^[0-9]+$ && "$DURATION" -ge 1 && "$DURATION" -le 120 ]] || { echo "DURATION must be 1..120" >&2; exit 2; }
JAVA_HOME="${JAVA_HOME:-$(scripts/find-jdk.sh)}"
export JAVA_HOME
image=$(cd "${IMAGE:-jlink/target/image}" && pwd)
[ -x "$image/bin/supervisor" ] || { echo "no image at $image (./dev.sh build)" >&2; exit 1; }
for c in nginx wrk python3; do command -v "$c" >/dev/null || { echo "$c is needed" >&2; exit 1; }; done
out=${OUT:-$(mktemp -d /tmp/memory-sequence.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
peers=$root/tests/data/bench-peers/conf
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up=$(free_port)
mkdir -p "$out/nginx" "$out/data" "$out/state" "$out/audit"
chmod 1777 "$out/nginx"
sed -e "s#/tmp/perf-anchor/run#$out/nginx#g" -e "s#127.0.0.1:18080#127.0.0.1:$up#" "$peers/nginx.conf" >"$out/nginx.conf"
sed -e "s#port: 18080#port: $up#" "$peers/sup-policy.yaml" >"$out/policy.yaml"
sed -e "s#127.0.0.1:18080#127.0.0.1:$up#" "$peers/req.lua" >"$out/req.lua"
cp "$peers/sup-gateway.toml" "$out/gateway.toml"
python3 "$peers/make_bodies.py" "$out/data"
nginx -c "$out/nginx.conf" >"$out/nginx.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$up/" && break; sleep 0.1; done

opts="-Xlog:gc,gc+ergo+heap=debug:file=$out/gc.log:uptime,level,tags"
[ "${NMT:-0}" = 1 ] && opts="$opts -XX:NativeMemoryTracking=summary"
SUPERVISOR_JAVA_OPTS="$opts ${SUPERVISOR_JAVA_OPTS:-}" "$image/bin/supervisor" run --policy "$out/policy.yaml" \
  --gateway-config "$out/gateway.toml" --listen 127.0.0.1:0 --state-dir "$out/state" \
  --audit-log "$out/audit/audit.jsonl" --admin-listen off >"$out/supervisor.out" 2>"$out/supervisor.err" &
sup=$!
pids+=($sup)
proxy=
for _ in $(seq 300); do
  proxy=$(grep -Eo 'supervisor listening on 127\.0\.0\.1:[0-9]+' "$out/supervisor.out" 2>/dev/null | grep -Eo '[0-9]+$') \
    && break
  sleep 0.1
done
[ -n "$proxy" ] || { cat "$out/supervisor.err" >&2; exit 1; }
# the JVM is the supervisor's process itself (the launcher execs it)

# RSS, RssAnon, RssFile (KiB) of the supervisor, one line per sample
sample() { awk '/^(VmRSS|RssAnon|RssFile):/{printf "%s ", $2} END{print ""}' "/proc/$sup/status" 2>/dev/null; }
ticks() { local l; read -r l <"/proc/$sup/stat"; l=${l##*) }; set -- $l; echo $((${12} + ${13})); }
gc_lines() { wc -l <"$out/gc.log" 2>/dev/null || echo 0; }
window() { # NAME CONNS SECONDS BODY(0|1)
  local name=$1-c$2 c=$2 s=$3 body= samp=$out/$1-c$2.rss t0 t1 g0 g1 sp raw=$out/$1-c$2.wrk
  [ "$4" = 1 ] && body=$out/data/body_2k.json
  : >"$samp"
  ( for ((n = 0; n < (s + 20) * 2; n++)); do sample >>"$samp"; sleep 0.5; done ) &
  sp=$!
  t0=$(ticks); g0=$(gc_lines)
  REQ_PATH=http://127.0.0.1:$up/ BODY_FILE=$body timeout $((s + 20)) \
    wrk -t2 -c"$c" -d"${s}s" --timeout 5s --latency -s "$out/req.lua" "http://127.0.0.1:$proxy/" >"$raw" 2>&1 || true
  kill "$sp" 2>/dev/null; wait "$sp" 2>/dev/null || true
  t1=$(ticks); g1=$(gc_lines)
  if [ "${NMT:-0}" = 1 ]; then
    "$JAVA_HOME/bin/jcmd" "$sup" VM.native_memory summary >"$out/$name.nmt" 2>&1 || true
    "$JAVA_HOME/bin/jcmd" "$sup" GC.heap_info >"$out/$name.heap" 2>&1 || true
    cat "/proc/$sup/smaps" >"$out/$name.smaps" 2>/dev/null || true
  fi
  local rps p99 reqs peak pauses
  rps=$(awk '/^Requests\/sec/{printf "%.0f", $2}' "$raw")
  reqs=$(awk '/requests in/{print $1}' "$raw")
  p99=$(awk '$1=="99%"{v=$2; u=v; sub(/^[0-9.]+/,"",u); x=v+0; if(u=="us") x/=1000; else if(u=="s") x*=1000;
                       printf "%.1f", x}' "$raw")
  peak=$(awk 'NF>=3 && $1>m {m=$1; a=$2; f=$3} END{printf "%d %d %d", m/1024, a/1024, f/1024}' "$samp")
  pauses=$(sed -n "$((g0 + 1)),${g1}p" "$out/gc.log" | awk '/\[gc *\] +GC\([0-9]+\) Pause/{n++; v=$NF; sub(/ms$/,"",v); t+=v}
             END{printf "%d %.1f", n, t}')
  read -r pk an fi <<<"$peak"
  read -r np tp <<<"$pauses"
  printf '%-16s %7s req/s  p99 %6s ms  peak RSS %4s MiB (anon %4s, file %3s)  CPU %5s ms/1k req  GC %3s pauses %7s ms\n' \
    "$name" "${rps:-0}" "${p99:-NA}" "$pk" "$an" "$fi" \
    "$(awk -v a="$t0" -v b="$t1" -v r="${reqs:-0}" 'BEGIN{ if (r > 0) printf "%.1f", (b - a) * 10 * 1000 / r; else print "NA"}')" \
    "$np" "$tp"
  sleep 1
}
# CPU time (ms) of the supervisor's threads by kind: JIT compilers, GC, the rest
thread_cpu() {
  local f l name
  for f in /proc/$sup/task/*/stat; do
    { read -r l <"$f"; } 2>/dev/null || continue
    name=${l#*(}; name=${name%%)*}; l=${l##*) }; set -- $l
    case $name in
      C1\ Compiler*|C2\ Compiler*) echo "jit $((${12} + ${13}))" ;;
      GC\ Thread*|G1\ *) echo "gc $((${12} + ${13}))" ;;
      *) echo "other $((${12} + ${13}))" ;;
    esac
  done | awk '{t[$1]+=$2} END{printf "jit %d gc %d other %d", t["jit"]*10, t["gc"]*10, t["other"]*10}'
}
echo "memory sequence: image $image, SUPERVISOR_JAVA_OPTS='${SUPERVISOR_JAVA_OPTS:-}', load average" \
  "$(cut -d' ' -f1-3 /proc/loadavg) before, out $out"
if [ "${COLD:-0}" -gt 0 ]; then
  window cold-POST 32 "$COLD" 1
  echo "  threads' CPU (ms) from the start to the end of cold-POST: $(thread_cpu)"
fi
window warm-GET 32 $((WARMUP / 2)) 0
window warm-POST 32 $((WARMUP - WARMUP / 2)) 1
window GET 32 "$DURATION" 0
window GET 128 "$DURATION" 0
window POST2K 32 "$DURATION" 1
window POST2K 128 "$DURATION" 1
echo "threads' CPU (ms) over the whole run: $(thread_cpu)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after; heap at the end: $(grep -E 'GC\([0-9]+\) Pause' "$out/gc.log" \
  | grep -Eo '[0-9]+M->[0-9]+M\([0-9]+M\)' | tail -1)"
