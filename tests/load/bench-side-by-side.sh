#!/usr/bin/env bash
# Side-by-side load benchmark of issues 10, 23 and 41: the supervisor against the peers, on this machine, in one run, with
# every target of both issues marked MET, MISSED or n/a (as a figure and a ratio from the same run). Not part of the
# test suite.
#
# Usage (from anywhere; needs root the first time, to let the harness apt-get its Debian packages):
#   tests/load/bench-side-by-side.sh
#   RUNS=3 DURATION=6 tests/load/bench-side-by-side.sh        # publishable: median and range of 3 runs
#   SKIP_PEERS=1 tests/load/bench-side-by-side.sh             # only direct + the supervisor targets (no peer ratios)
#   IMAGE=/path/to/image tests/load/bench-side-by-side.sh     # another runtime image (it is never built then)
#
# What it does (everything on 127.0.0.1; every wait and load loop bounded in time and count):
#  1. finds a JDK >= 21 (scripts/find-jdk.sh), builds the runtime image if missing (./dev.sh build: the shipped form,
#     with its AOT cache lib/supervisor.aot; an image without one is measured all the same and the report says so),
#     and uses the peer harness tests/data/bench-peers/run_anchors.sh (a copy of the shared harness, with a WARMUP
#     knob added): nginx upstream that reads the whole body; wrk GET, POST 2 KiB JSON (an e-mail address and an sk-
#     key), POST 1 MiB.
#  2. per run (RUNS): a noise probe (wrk GET straight to nginx, 32 connections, NOISE_DURATION s); run_anchors.sh with
#     TARGETS = direct tinyproxy squid squid_icap mitmproxy supervisor_nomw supervisor (supervisor = openshell/regex
#     selected, supervisor_nomw = no middleware selected), then once more with TARGETS=supervisor through
#     side-by-side/supervisor-launcher.sh with SUPERVISOR_EXT_STAGE=1: one external stage, Privacy Guard over
#     loopback gRPC, instead of the regex; its rows are renamed supervisor_ext; then the noise probe again. A run
#     whose two probes differ by more than 10 % is flagged NOISY in the report (issue 23, item 3). Each supervisor
#     target gets WARMUP s of unrecorded load before its measured windows (the JIT), every other target PEER_WARMUP s
#     (the same by default). 2b: the cold start (COLD_DURATION s of POST 2 KiB from the moment a freshly started
#     squid, then supervisor, first answers; no warm-up), then the noise probe again.
#  3. extras, once: (a) RSS_CONNS concurrent 1 MiB uploads (run_anchors.sh, RSS sampled every 0.5 s): through the
#     regex chain for its peak RSS, and without middleware under a heap cap (NOMW_HEAP_MIB) smaller than the
#     in-flight bodies, which only a proxy that streams them survives; (b) start-up time, launch of
#     `bin/supervisor run` to its line "supervisor listening on", STARTS times, each at most 20 s; (c) the added
#     latency of one external stage at 2 KiB, tests/bench/external-stage-latency.sh "2 KiB chat" 1500 (sequential);
#     plus a check that the upstream sees Privacy Guard's redaction through supervisor_ext, that Privacy Guard stops
#     with the supervisor, and that no process of the image is left at the end; (d) the image's size (du).
#  4. one report (side-by-side/report.py): the table (req/s median and range, p50, p99, errors, shed, peak RSS,
#     ratios to direct and to squid_icap; shed = the supervisor's 503 middleware_admission_exhausted answers, from its
#     supervisor_requests_shed_total over each window, counted apart from the errors: its middleware work bound of
#     32 evaluating + 64 queued requests sheds at 128 connections by design), the extras, issue 10's targets, then issue 23's: POST 2 KiB c=32 against squid,
#     squid_icap, direct and squid's p99; GET c=32 against squid and supervisor_nomw; upstream TCP opens per request
#     (the harness's conn/r) of every supervisor row; POST 1 MiB against squid_icap; peak RSS under POST 2 KiB and
#     with RSS_CONNS 1 MiB uploads; image size and start-up; and the noise probes. Printed and written to
#     OUT/report.txt.
#
# Env knobs (expected run time on a quiet 2-core machine: defaults about 5.5 minutes; RUNS=3 DURATION=6 about
# 22 minutes; each run is about 8 x 5 x (DURATION + 1.5) s of measurements plus 3 x WARMUP s):
#   RUNS=1          repetitions of step 2 (req/s is then the median, with min-max; p50/p99 medians)
#   DURATION=2      seconds per wrk measurement in step 2 (5 shapes per target, 8 targets)
#   WARMUP=10       seconds of unrecorded wrk load on each supervisor target (supervisor, supervisor_nomw,
#                   supervisor_ext, and the two runs of 3a) before its measured windows: half GET, half POST 2 KiB,
#                   32 connections (harness knob SUPERVISOR_WARMUP); 0 or 1 = the harness's original 1 s of POST
#                   2 KiB on 8 connections.
#   PEER_WARMUP=$WARMUP  the same for every other target (direct and the peers): by default every target gets the
#                   same warm-up, so a JIT's warm-up is not the only one paid before the measured windows
#   COLD_DURATION=5 seconds of the cold-start step (2b): squid and the supervisor (regex) started afresh, POST 2 KiB
#                   on 32 connections from the moment each first answers, no warm-up; 0 skips the step
#   NOISE_DURATION=3  seconds of each noise probe (direct GET, 32 connections) at the start and end of each run
#   CONNS="32 128"  connections for GET and POST 2 KiB;  BIG_CONNS=8  connections for POST 1 MiB
#   SKIP_PEERS=1    step 2 without tinyproxy, squid, squid_icap, mitmproxy (peer ratios and targets become n/a)
#   RSS_CONNS=128 RSS_DURATION=5   step 3a: concurrent 1 MiB uploads and seconds
#   NOMW_HEAP_MIB=64  step 3a: max heap (-Xmx, MiB) of the no-middleware run; must stay below RSS_CONNS MiB
#   STARTS=5        step 3b: number of starts
#   IMAGE=dir       the runtime image to measure (default jlink/target/image of this repository, built if missing)
#   OUT=dir         results directory (default target/bench-side-by-side/<UTC stamp>; never committed)
#   SKIP_INSTALL=1  passed to run_anchors.sh: do not check/install Debian packages
#   BENCH_PEERS=dir the harness (default tests/data/bench-peers in this repository)
# Ctrl-C or SIGTERM stops everything it started, within max(DURATION, WARMUP) + a few seconds (the harness stops its
# own servers when its current wrk run ends; this script stops the rest).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
t_start=$(date +%s)

RUNS=${RUNS:-1}
DURATION=${DURATION:-2}
CONNS=${CONNS:-"32 128"}
BIG_CONNS=${BIG_CONNS:-8}
SKIP_PEERS=${SKIP_PEERS:-0}
RSS_CONNS=${RSS_CONNS:-128}
RSS_DURATION=${RSS_DURATION:-5}
NOMW_HEAP_MIB=${NOMW_HEAP_MIB:-64}
STARTS=${STARTS:-5}
WARMUP=${WARMUP:-10}
PEER_WARMUP=${PEER_WARMUP:-$WARMUP}
COLD_DURATION=${COLD_DURATION:-5}
NOISE_DURATION=${NOISE_DURATION:-3}
PEERS=${BENCH_PEERS:-$root/tests/data/bench-peers}

die() { echo "bench-side-by-side: $*" >&2; exit 1; }
log() { echo "[$(date +%T)] == $*" >&2; }
int_in() { [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
int_in "$RUNS" 1 20 || die "RUNS must be 1..20"
int_in "$DURATION" 1 120 || die "DURATION must be 1..120 (seconds)"
int_in "$BIG_CONNS" 2 1000 || die "BIG_CONNS must be 2..1000"
int_in "$RSS_CONNS" 2 1000 || die "RSS_CONNS must be 2..1000"
int_in "$RSS_DURATION" 1 120 || die "RSS_DURATION must be 1..120 (seconds)"
int_in "$STARTS" 1 20 || die "STARTS must be 1..20"
int_in "$WARMUP" 0 300 || die "WARMUP must be 0..300 (seconds)"
int_in "$PEER_WARMUP" 0 300 || die "PEER_WARMUP must be 0..300 (seconds)"
int_in "$COLD_DURATION" 0 60 || die "COLD_DURATION must be 0..60 (seconds)"
int_in "$NOISE_DURATION" 1 60 || die "NOISE_DURATION must be 1..60 (seconds)"
int_in "$NOMW_HEAP_MIB" 16 $((RSS_CONNS - 1)) || die "NOMW_HEAP_MIB must be 16..RSS_CONNS-1 (MiB)"
for c in $CONNS; do int_in "$c" 2 1000 || die "CONNS must be numbers 2..1000"; done

[ -f "$PEERS/run_anchors.sh" ] || die "peer harness not found: $PEERS/run_anchors.sh
  It is the peer harness kept at tests/data/bench-peers in this repository
  (set BENCH_PEERS=dir if it lives elsewhere)."
command -v python3 >/dev/null || die "python3 is needed (report)"
JAVA_HOME=$(scripts/find-jdk.sh) || exit 1
export JAVA_HOME
if [ -n "${IMAGE:-}" ]; then
  [ -x "$IMAGE/bin/supervisor" ] || die "IMAGE=$IMAGE has no bin/supervisor"
  image=$(cd "$IMAGE" && pwd)
else
  image=$root/jlink/target/image
  [ -x "$image/bin/supervisor" ] || ./dev.sh build   # the shipped form: with its AOT cache
  [ -x "$image/bin/supervisor" ] || die "no runtime image at $image after ./dev.sh build"
fi
if [ ! -f "$image/lib/supervisor.aot" ]; then
  log "note: $image has no lib/supervisor.aot (built with -Dimage.aot=false or a JDK < 25): not the shipped form"
fi

stamp=$(date -u +%Y%m%dT%H%M%SZ)
OUT=${OUT:-$root/target/bench-side-by-side/$stamp}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
side=$root/tests/load/side-by-side
launcher=$side/supervisor-launcher.sh
export SUPERVISOR_IMAGE=$image PRIVACY_GUARD_LOG=$OUT/privacy-guard.out

# ---------------------------------------------------------------- processes this script starts itself
# Long steps run in the background while this script waits, so INT and TERM reach the trap at once (background
# children of a script ignore SIGINT: the trap stops them with SIGTERM instead).
pids=()   # servers started here
step=     # the running step (run_anchors.sh, startup.py, external-stage-latency.sh)
pstart() { local l; { read -r l <"/proc/$1/stat"; } 2>/dev/null || return 1; l=${l##*) }; set -- $l; echo "${20}"; }
stop_pid() { # PID [SECONDS=10]: TERM, wait, KILL; then TERM to its children seen before, if still the same
  local p=$1 i k kids=()
  for k in $(ps -o pid= --ppid "$p" 2>/dev/null); do kids+=("$k:$(pstart "$k")"); done
  kill -TERM "$p" 2>/dev/null || { wait "$p" 2>/dev/null || true; return 0; }
  for i in $(seq 1 $((${2:-10} * 10))); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
  for k in "${kids[@]}"; do
    [ "$(pstart "${k%%:*}")" = "${k#*:}" ] && kill -TERM "${k%%:*}" 2>/dev/null
  done
  return 0
}
cleanup() {
  local i
  # run_anchors.sh stops its servers when its current wrk measurement ends (at most DURATION + 20 s)
  local longest=$DURATION
  for i in "$RSS_DURATION" "$WARMUP" "$PEER_WARMUP" "$NOISE_DURATION"; do [ "$i" -gt "$longest" ] && longest=$i; done
  if [ -n "$step" ]; then stop_pid "$step" $((longest + 30)); fi
  step=
  for ((i=${#pids[@]}-1; i>=0; i--)); do stop_pid "${pids[i]}"; done
  pids=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM
wait_step() { local rc=0; wait "$step" || rc=$?; step=; return "$rc"; }

# await FILE REGEX SECONDS PID: until FILE has a line matching REGEX; fails if PID exits or time runs out
await() {
  local i
  for i in $(seq 1 $(($3 * 10))); do
    grep -Eq "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# anchors NAME VAR=VALUE... : one run_anchors.sh invocation; its results directory is copied to OUT/NAME
anchors() {
  local name=$1 csv
  shift
  log "run_anchors.sh [$name] $*"
  # the harness's WARMUP is the peers' (PEER_WARMUP), SUPERVISOR_WARMUP the supervisor targets' (WARMUP)
  env "$@" WARMUP="$PEER_WARMUP" SUPERVISOR_WARMUP="$WARMUP" SUPERVISOR_LAUNCHER="$launcher" bash "$PEERS/run_anchors.sh" > >(tee "$OUT/$name.log" >&2) 2>&1 &
  step=$!
  wait_step || log "run_anchors.sh [$name] failed"
  sleep 0.2   # tee's last lines
  csv=$(sed -n 's/.*csv: \(\/[^ ]*results\.csv\).*/\1/p' "$OUT/$name.log" | tail -1)
  [ -n "$csv" ] && [ -s "$csv" ] || die "run_anchors.sh [$name] wrote no results (see $OUT/$name.log)"
  rm -rf "${OUT:?}/$name"
  cp -r "$(dirname "$csv")" "$OUT/$name"
}

# noise_probe NAME: direct GET (wrk -> nginx, 2 threads, 32 connections) for NOISE_DURATION s on a nginx of its own
# with the harness's configuration; appends "NAME=req/s" (empty if it failed) to OUT/noise.txt
noise_probe() {
  local name=$1 dir=$OUT/noise np up=0 rps=
  mkdir -p "$dir" /tmp/perf-anchor/run
  log "noise probe [$name]: direct GET, 32 connections, ${NOISE_DURATION}s"
  if [ -n "$(ss -ltnH 'sport = :18080')" ]; then
    log "noise probe [$name]: port 18080 is busy (not ours), skipped"
  else
    nginx -c "$PEERS/conf/nginx.conf" >"$dir/$name-nginx.out" 2>&1 &
    np=$!
    pids+=("$np")
    for _ in $(seq 1 100); do   # at most 10 s
      if [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' http://127.0.0.1:18080/ || true)" = 200 ]; then up=1; break; fi
      kill -0 "$np" 2>/dev/null || break
      sleep 0.1
    done
    if [ "$up" = 1 ]; then
      REQ_PATH=/ BODY_FILE= timeout $((NOISE_DURATION + 20)) wrk -t2 -c32 -d"${NOISE_DURATION}s" --latency \
        -s "$PEERS/conf/req.lua" http://127.0.0.1:18080/ >"$dir/$name.txt" 2>&1 &
      step=$!
      wait_step || log "noise probe [$name]: wrk failed (see $dir/$name.txt)"
      rps=$(awk '/^Requests\/sec/{printf "%.0f", $2}' "$dir/$name.txt" || true)
    else
      log "noise probe [$name]: nginx did not answer within 10 s (see $dir/$name-nginx.out)"
    fi
    stop_pid "$np"
    pids=()
  fi
  echo "$name=$rps" >>"$OUT/noise.txt"
}

# image_stamp: size and modification time of the image's lib/modules and lib/supervisor.aot ("-" when absent)
image_stamp() {
  local f
  for f in "$image/lib/modules" "$image/lib/supervisor.aot"; do
    stat -c '%s@%Y' "$f" 2>/dev/null || echo -
  done | tr '\n' ' '
}

peers="tinyproxy squid squid_icap mitmproxy"
if [ "$SKIP_PEERS" = 1 ]; then peers=""; fi
targets="direct $peers supervisor_nomw supervisor"
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  modified=$(git diff --quiet HEAD -- modules plugins jlink 2>/dev/null || echo ' (modified)')
  if [ -n "${IMAGE:-}" ]; then   # the image is not this checkout's build: the commit is the scripts' only
    echo "commit=$(git rev-parse --short HEAD) (scripts; the image is IMAGE, built elsewhere)"
  else
    echo "commit=$(git rev-parse --short HEAD)$modified"
  fi
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
  mem=$(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)
  echo "machine=$(nproc) CPUs ($cpu), $mem RAM, Linux $(uname -r)"
  echo "java=$("$image/bin/java" -version 2>&1 | head -1)"
  echo "image=$image (lib/modules of $(date -u -r "$image/lib/modules" +%Y-%m-%dT%H:%M:%SZ))"
  # the image's size: apparent bytes (what a copy or an archive holds) and disk usage, both from du
  echo "image_bytes=$(du -sb "$image" | cut -f1)"
  echo "image_disk_bytes=$(du -s -B1 "$image" | cut -f1)"
  echo "image_modules_bytes=$(du -b "$image/lib/modules" | cut -f1)"
  # compared at the end: an image rebuilt during the run (IMAGE pointing at a tree someone builds) spoils the figures
  echo "image_stamp_before=$(image_stamp)"
  if [ -f "$image/lib/supervisor.aot" ]; then
    echo "image_aot_bytes=$(du -b "$image/lib/supervisor.aot" | cut -f1)"
  else
    echo "image_aot_bytes=absent"
  fi
  echo "wrk=$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2)"
  echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "knobs=RUNS=$RUNS DURATION=$DURATION CONNS='$CONNS' BIG_CONNS=$BIG_CONNS SKIP_PEERS=$SKIP_PEERS" \
    "RSS_CONNS=$RSS_CONNS RSS_DURATION=$RSS_DURATION STARTS=$STARTS NOMW_HEAP_MIB=$NOMW_HEAP_MIB WARMUP=$WARMUP" \
    "PEER_WARMUP=$PEER_WARMUP COLD_DURATION=$COLD_DURATION NOISE_DURATION=$NOISE_DURATION"
  echo "targets=$targets"
} >"$OUT/meta.txt"
log "results in $OUT"

# ---------------------------------------------------------------- 2. the table, RUNS times
for run in $(seq 1 "$RUNS"); do
  noise_probe "run$run-start"
  anchors "main-$run" TARGETS="$targets" SUPERVISOR_EXT_STAGE=0 DURATION="$DURATION" CONNS="$CONNS" \
    BIG_CONNS="$BIG_CONNS"
  anchors "ext-$run" TARGETS=supervisor SUPERVISOR_EXT_STAGE=1 DURATION="$DURATION" CONNS="$CONNS" \
    BIG_CONNS="$BIG_CONNS"
  # 2b. the first COLD_DURATION s after start: squid and the supervisor (regex), each started afresh, no warm-up
  if [ "$COLD_DURATION" -gt 0 ]; then
    cold_peers="squid"; [ "$SKIP_PEERS" = 1 ] && cold_peers=""
    anchors "cold-$run" TARGETS="$cold_peers supervisor" COLD=1 SUPERVISOR_EXT_STAGE=0 DURATION="$COLD_DURATION" \
      CONNS=32 BIG_CONNS="$BIG_CONNS"
  fi
  # merged table of this run: the ext invocation's "supervisor" rows are the supervisor_ext target
  { cat "$OUT/main-$run/results.csv"
    awk -F, -v OFS=, 'NR > 1 && $1 == "supervisor" { $1 = "supervisor_ext"; print }' "$OUT/ext-$run/results.csv"
    if [ -f "$OUT/cold-$run/results.csv" ]; then awk 'NR > 1' "$OUT/cold-$run/results.csv"; fi
  } >"$OUT/results-run$run.csv"
  noise_probe "run$run-end"
done

# ---------------------------------------------------------------- 3a. RSS_CONNS concurrent 1 MiB uploads
# CONNS=" " (blank, not empty) makes run_anchors.sh skip the GET and 2 KiB shapes: only POST 1 MiB at BIG_CONNS.
# Through the regex chain (the body is needed): the peak RSS, default JVM settings.
anchors rss TARGETS=supervisor SUPERVISOR_EXT_STAGE=0 DURATION="$RSS_DURATION" CONNS=" " BIG_CONNS="$RSS_CONNS"
# Without a chain: a JVM's RSS grows with allocation whatever it keeps, so it says little about buffering; a heap
# capped below what the in-flight bodies would fill (NOMW_HEAP_MIB < RSS_CONNS x 1 MiB) does: buffering them cannot fit.
anchors rss-nomw TARGETS=supervisor_nomw SUPERVISOR_EXT_STAGE=0 SUPERVISOR_JAVA_OPTS="-Xmx${NOMW_HEAP_MIB}m" \
  DURATION="$RSS_DURATION" CONNS=" " BIG_CONNS="$RSS_CONNS"

# ---------------------------------------------------------------- check: supervisor_ext really runs Privacy Guard
# The harness's body carries its e-mail outside the chat messages, where Privacy Guard does not look, so its
# "redacted" column says no for supervisor_ext; here a chat message with an address goes through the same setup.
log "supervisor_ext check: Privacy Guard redacts what the upstream sees, and stops with the supervisor"
check=$OUT/ext-check
mkdir -p "$check" /tmp/perf-anchor/run
nginx -c "$PEERS/conf/nginx.conf" >"$check/nginx.out" 2>&1 &
nginx_pid=$!
pids+=("$nginx_pid")
SUPERVISOR_EXT_STAGE=1 "$launcher" run --listen 127.0.0.1:13130 --state-dir "$check/state" \
  --audit-log "$check/audit.jsonl" >"$check/supervisor.out" 2>"$check/supervisor.err" &
sup_pid=$!
pids+=("$sup_pid")
redacted=no pg_stopped=no
if await "$check/supervisor.out" '^supervisor listening on ' 40 "$sup_pid"; then
  chat='{"model":"gpt-x","messages":[{"role":"user","content":"Send the summary to alice.smith@example.com today."}]}'
  for _ in $(seq 1 50); do   # nginx may still be starting: at most 5 s
    echoed=$(curl -s -m 10 -x http://127.0.0.1:13130 -H 'Content-Type: application/json' --data-binary "$chat" \
      http://127.0.0.1:18080/echo || true)
    [ -n "$echoed" ] && break
    sleep 0.1
  done
  echo "$echoed" >"$check/upstream-saw.txt"
  if grep -qF '[email]' <<<"$echoed" && ! grep -qF 'alice.smith@' <<<"$echoed"; then redacted=yes; fi
  pg_pid=$(ps -o pid= --ppid "$sup_pid" | head -1 | tr -d ' ' || true)
  stop_pid "$sup_pid"
  for _ in $(seq 1 50); do   # Privacy Guard gets SIGTERM when its parent ends: at most 5 s
    if [ -z "$(ss -ltnH 'sport = :13140')" ] && { [ -z "$pg_pid" ] || ! kill -0 "$pg_pid" 2>/dev/null; }; then
      pg_stopped=yes; break
    fi
    sleep 0.1
  done
else
  echo "supervisor_ext did not start:" >&2
  tail -5 "$check/supervisor.err" >&2
fi
stop_pid "$sup_pid"
stop_pid "$nginx_pid"
pids=()
printf 'redacted=%s\nprivacy_guard_stopped=%s\n' "$redacted" "$pg_stopped" >"$check/result.txt"

# ---------------------------------------------------------------- 3b. start-up time
log "start-up: $STARTS starts of bin/supervisor run (launch to 'supervisor listening on')"
python3 "$side/startup.py" "$STARTS" 20 "$OUT/startup" -- "$image/bin/supervisor" run \
  --policy "$PEERS/conf/sup-policy.yaml" --gateway-config "$PEERS/conf/sup-gateway.toml" --listen 127.0.0.1:0 \
  --admin-listen 127.0.0.1:0 --state-dir "$OUT/startup/state" --audit-log "$OUT/startup/audit.jsonl" \
  >"$OUT/startup.txt" &
step=$!
wait_step || log "start-up measurement failed (see $OUT/startup)"

# ---------------------------------------------------------------- 3c. one external stage, sequential calls
log "external stage latency at 2 KiB: tests/bench/external-stage-latency.sh \"2 KiB chat\" 1500"
# (bounded inside: Privacy Guard's start at most 60 s, each case at most 1500 calls or 30 s)
tests/bench/external-stage-latency.sh "2 KiB chat" 1500 >"$OUT/ext-latency.txt" 2>&1 &
step=$!
wait_step || log "external-stage-latency.sh failed (see $OUT/ext-latency.txt)"

# ---------------------------------------------------------------- stray processes, report
{
  echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "wall_s=$(($(date +%s) - t_start))"
  echo "image_stamp_after=$(image_stamp)"
  left=$(pgrep -f -- "$image/bin/java" | tr '\n' ' ' || true)
  echo "stray_image_pids=${left:-none}"
  busy=""
  for p in 18080 18082 18888 13128 13129 13130 13131 13140 11344; do
    if [ -n "$(ss -ltnH "sport = :$p")" ]; then busy+="$p "; fi
  done
  echo "busy_harness_ports=${busy:-none}"
} >>"$OUT/meta.txt"
python3 "$side/report.py" "$OUT" | tee "$OUT/report.txt"
log "report: $OUT/report.txt"
