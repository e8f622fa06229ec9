#!/usr/bin/env bash
# CPU per request of `supervisor run` (not part of the test suite): the regex host against the regex + L7 REST host
# of tests/load/supervisor-load.sh's policy and body (audit log on), in one supervisor: WARM (default 15) s of
# unrecorded load on each host, then ROUNDS rounds of SECONDS s on the regex host then on the L7 host, CONNS
# connections, 2 wrk threads. CPU per request = the JVM's utime + stime (/proc/PID/stat, JIT threads included) over a
# round / its requests. docs/BENCHMARKS.md ("The audit events written once, as bytes") alternates two images with it.
# Usage: IMAGE=<image> BODY_BYTES=2048 tests/load/l7-cpu.sh [SECONDS=8] [CONNS=16] [ROUNDS=3]
# AUDIT=off runs without the audit log. PROF=<async-profiler event> (cpu, alloc) with AP_LIB=<libasyncProfiler.so>
# profiles 15 s on each host instead (PINT: interval, default 1ms; POUT: output prefix, collapsed stacks).
set -euo pipefail
cd "$(dirname "$0")/../.."
BODY_BYTES=${BODY_BYTES:-2048}
seconds=${1:-8}; conns=${2:-16}; rounds=${3:-3}; max=100000000; threads=2
. tests/load/load-lib.sh
load_setup
load_regex_l7_files
if [ "${AUDIT:-on}" = off ]; then
  "$image/bin/supervisor" run --policy "$work/policy.yaml" --gateway-config "$work/gateway.toml" \
    --listen 127.0.0.1:0 --state-dir "$work/state" --audit-log off --admin-listen off \
    >"$work/supervisor.out" 2>"$work/supervisor.err" &
  pids+=($!)
  proxy=$(await_port "$work/supervisor.out" 'supervisor listening on 127\.0\.0\.1:[0-9]+')
else
  start_supervisor "$work/policy.yaml" "$work/gateway.toml"
fi
spid=${pids[-1]}
# the java child of the launcher script
jpid=$(pgrep -P "$spid" java || echo "$spid")
body='{"model":"gpt-4o","messages":[{"role":"system","content":"You are a deployment assistant."},{"role":"user","content":"Deploy the service with this key: sk-proj-LOADtest0123456789abcdefghijklmnopqrstuvwxyzAB and report back."}]}'
pad=$((BODY_BYTES - ${#body} - 13))
padding=$(head -c "$pad" /dev/zero | tr '\0' x)
body="${body%\}}"',"padding":"'"$padding"'"}'
wrk_script POST "http://load.test:$up/v1/chat/completions" "load.test:$up" "$body" >"$work/proxy.lua"
wrk_script POST "http://l7.test:$up/v1/chat/completions" "l7.test:$up" "$body" >"$work/proxy-l7.lua"
cpu() { awk '{print $14+$15}' /proc/$jpid/stat; }
tck=$(getconf CLK_TCK)
one() { # name lua seconds
  local c0 c1 out n rps
  c0=$(cpu)
  out=$(wrk -t $threads -c "$conns" -d "${3}s" --timeout 10s -s "$2" "http://127.0.0.1:$proxy")
  c1=$(cpu)
  read -r _ n rps _ _ _ <<<"$(grep '^RESULT ' <<<"$out")"
  awk -v n="$n" -v r="$rps" -v c=$((c1 - c0)) -v t="$tck" -v name="$1" \
    'BEGIN{printf "%-8s %8d req %8.0f req/s  cpu %.1f s  %.1f us/req\n", name, n, r, c/t, 1e6*c/t/n}'
}
echo "image $IMAGE jpid $jpid load $(cut -d' ' -f1-3 /proc/loadavg)"
one warm-rx "$work/proxy.lua" ${WARM:-15} >/dev/null
one warm-l7 "$work/proxy-l7.lua" ${WARM:-15} >/dev/null
if [ -n "${PROF:-}" ]; then
  jcmd=$JAVA_HOME/bin/jcmd
  ag=${AP_LIB:?AP_LIB: the path of libasyncProfiler.so}
  for host in l7 regex; do
    lua=$work/proxy.lua; [ $host = l7 ] && lua=$work/proxy-l7.lua
    $jcmd "$jpid" JVMTI.agent_load $ag "\"start,event=$PROF,interval=${PINT:-1ms},threads\"" >/dev/null
    one $host "$lua" 15
    $jcmd "$jpid" JVMTI.agent_load $ag "\"stop,file=${POUT}-$host.txt,collapsed\"" >/dev/null
  done
  exit 0
fi
for r in $(seq "$rounds"); do
  one regex "$work/proxy.lua" "$seconds"
  one l7 "$work/proxy-l7.lua" "$seconds"
done
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
