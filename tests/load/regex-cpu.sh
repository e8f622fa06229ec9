#!/usr/bin/env bash
# CPU per request of `supervisor run` on the regex host only (not part of the test suite): openshell/regex redacting,
# fail_closed, no L7 (tests/load/load-lib.sh's policy, host load.test), audit log on, LoadUpstream answering `ok`.
# The bodies are the side-by-side harness's (tests/data/bench-peers/conf/make_bodies.py: JSON chat completions of
# 2 KiB and 1 MiB, one `sk-proj-` key and two e-mail addresses each, redacted on every request). For each size in
# SIZES (default "2k 1m"): WARM (default 20) s of unrecorded load, then ROUNDS rounds of SECONDS s; CONNS connections
# (32 for 2k, 8 for 1m unless set), 2 wrk threads. CPU per request = the JVM's utime + stime (/proc/PID/stat, JIT
# threads included) over a round / its requests; the load average is printed before and after.
# Usage: IMAGE=<image> tests/load/regex-cpu.sh [SECONDS=10] [ROUNDS=2]
# PROF=<async-profiler event> (cpu, alloc) with AP_LIB=<libasyncProfiler.so> and POUT=<prefix> profiles one 15 s
# window per size after the warm-up instead (PINT: interval, default 1ms; collapsed stacks in POUT-<size>.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}; rounds=${2:-2}; max=100000000; threads=2
. tests/load/load-lib.sh
load_setup
load_regex_l7_files
start_supervisor "$work/policy.yaml" "$work/gateway.toml"
spid=${pids[-1]}
jpid=$(pgrep -P "$spid" java || echo "$spid")
python3 tests/data/bench-peers/conf/make_bodies.py "$work/bodies"
for size in 2k 1m; do
  wrk_script POST "http://load.test:$up/v1/chat/completions" "load.test:$up" "@$work/bodies/body_$size.json" \
    >"$work/$size.lua"
done
cpu() { awk '{print $14+$15}' /proc/$jpid/stat; }
tck=$(getconf CLK_TCK)
one() { # name size seconds
  local c0 c1 out n rps p99 errs conns
  conns=${CONNS:-$([ "$2" = 1m ] && echo 8 || echo 32)}
  c0=$(cpu)
  out=$(wrk -t $threads -c "$conns" -d "${3}s" --timeout 10s -s "$work/$2.lua" "http://127.0.0.1:$proxy")
  c1=$(cpu)
  read -r _ n rps _ p99 errs <<<"$(grep '^RESULT ' <<<"$out")"
  awk -v n="$n" -v r="$rps" -v p="$p99" -v e="$errs" -v c=$((c1 - c0)) -v t="$tck" -v name="$1" \
    'BEGIN{printf "%-8s %8d req %8.0f req/s p99 %8.2f ms errors %d  cpu %.1f s  %.1f us/req\n",
      name, n, r, p, e, c/t, 1e6*c/t/n}'
}
echo "image $IMAGE jpid $jpid load $(cut -d' ' -f1-3 /proc/loadavg)"
for size in ${SIZES:-2k 1m}; do
  one warm-$size $size ${WARM:-20} >/dev/null
  if [ -n "${PROF:-}" ]; then
    ag=${AP_LIB:?AP_LIB: the path of libasyncProfiler.so}
    "$JAVA_HOME/bin/jcmd" "$jpid" JVMTI.agent_load $ag "\"start,event=$PROF,interval=${PINT:-1ms},threads\"" >/dev/null
    one $size $size 15
    "$JAVA_HOME/bin/jcmd" "$jpid" JVMTI.agent_load $ag "\"stop,file=${POUT}-$size.txt,collapsed\"" >/dev/null
    continue
  fi
  for r in $(seq "$rounds"); do
    one $size $size "$seconds"
  done
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
