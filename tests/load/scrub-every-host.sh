#!/usr/bin/env bash
# What scrubbing every response would cost (issue 39, item 3; not part of the test suite). One `supervisor run` from the
# runtime image, one loopback upstream (LoadUpstream, BODY bytes of JSON-like text per response, default 2048), no
# middleware. Three credentials are declared: bound to scrub.test, so every response from scrub.test is scrubbed of
# all three (as every response from every host would be if the scrub applied everywhere); plain.test has no credential
# bound, so its responses are relayed as they are. wrk sends the same GET (no placeholder) to each host in turn,
# ROUNDS times (default 3) after a warm-up of both, and prints requests/s, p50/p99 and the supervisor's CPU time per
# request (user + system from /proc/PID/stat: less sensitive to other load on the machine than requests/s) for each
# run, then the medians of both.
# Bounded: each run lasts SECONDS (default 8, at most 120); CONNECTIONS keep-alive connections (default 16) on 2 wrk
# threads. Processes it starts are stopped on exit. IMAGE (default jlink/target/image) is the image to run.
# Usage: tests/load/scrub-every-host.sh [seconds] [connections]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-8}
conns=${2:-16}
rounds=${ROUNDS:-3}
body_bytes=${BODY:-2048}
threads=2
if ! [[ "$seconds" =~ ^[0-9]+$ && "$seconds" -ge 1 && "$seconds" -le 120 ]]; then
  echo "seconds must be 1..120" >&2
  exit 2
fi
if ! [[ "$conns" =~ ^[0-9]+$ && "$conns" -ge $threads && "$conns" -le 1000 ]]; then
  echo "connections must be $threads..1000" >&2
  exit 2
fi
if ! [[ "$rounds" =~ ^[0-9]+$ && "$rounds" -ge 1 && "$rounds" -le 20 ]]; then
  echo "ROUNDS must be 1..20" >&2
  exit 2
fi
[ -x "${IMAGE:-jlink/target/image}/bin/supervisor" ] \
  || { echo "no image at ${IMAGE:-jlink/target/image} (./dev.sh build)" >&2; exit 2; }
command -v wrk >/dev/null 2>&1 || { echo "wrk is not installed (Debian package wrk)" >&2; exit 2; }
. tests/load/load-lib.sh
load_setup

"$JAVA_HOME/bin/java" tests/load/LoadUpstream.java "$body_bytes" >"$work/upstream.out" 2>&1 &
pids+=($!)
up=$(await_port "$work/upstream.out" 'upstream listening on 127\.0\.0\.1:[0-9]+')

cat >"$work/policy.yaml" <<YAML
version: 1
network_policies:
  load:
    endpoints:
      - { host: scrub.test, ports: [$up] }
      - { host: plain.test, ports: [$up] }
YAML
cat >"$work/gateway.toml" <<TOML
[openshell.supervisor.network]
allow_loopback_upstreams = true
[openshell.supervisor.network.static_hosts]
"scrub.test" = "127.0.0.1"
"plain.test" = "127.0.0.1"
[[openshell.supervisor.credentials]]
name = "KEY_A"
source = "env:BENCH_KEY_A"
hosts = ["scrub.test"]
[[openshell.supervisor.credentials]]
name = "KEY_B"
source = "env:BENCH_KEY_B"
hosts = ["scrub.test"]
[[openshell.supervisor.credentials]]
name = "KEY_C"
source = "env:BENCH_KEY_C"
hosts = ["scrub.test"]
TOML
BENCH_KEY_A="sk-bench-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
BENCH_KEY_B="ghp_$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')" \
BENCH_KEY_C="AKIA$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" \
start_supervisor "$work/policy.yaml" "$work/gateway.toml"
sup_pid=${pids[-1]}

for host in scrub plain; do
  cat >"$work/$host.lua" <<LUA
wrk.method = "GET"
wrk.path = "http://$host.test:$up/v1/objects"
wrk.headers["Host"] = "$host.test:$up"
$(wrk_done)
LUA
done

cpu_ticks() { # user + system clock ticks of the supervisor so far (fields 14 and 15 of /proc/PID/stat)
  awk '{print $14 + $15}' "/proc/$sup_pid/stat"
}
tick_hz=$(getconf CLK_TCK)

measure_cpu() { # name, script, seconds; prints the line and appends req/s and CPU us/request to $work/NAME.rps/.cpu
  local out line n rps p50 p99 errors t0 t1 cpu
  t0=$(cpu_ticks)
  out=$(wrk -t "$threads" -c "$conns" -d "${3}s" --timeout 10s -s "$2" "http://127.0.0.1:$proxy")
  t1=$(cpu_ticks)
  line=$(grep '^RESULT ' <<<"$out") || { echo "$out" >&2; return 1; }
  read -r _ n rps p50 p99 errors <<<"$line"
  if [ "$errors" != 0 ]; then
    echo "$1: $errors errors or non-200 answers" >&2
    return 1
  fi
  cpu=$(awk -v d=$((t1 - t0)) -v hz="$tick_hz" -v n="$n" 'BEGIN {printf "%.1f", d / hz * 1e6 / n}')
  printf '%-20s %8d requests %7.0f req/s  p50 %6.3f ms  p99 %7.3f ms  CPU %6.1f us/request\n' "$1" "$n" "$rps" \
    "$p50" "$p99" "$cpu"
  echo "$rps" >>"$work/${1%% *}.rps"
  echo "$cpu" >>"$work/${1%% *}.cpu"
}

echo "scrub cost: ${seconds} s per run, ${rounds} rounds, ${conns} connections, ${body_bytes}-byte responses," \
  "$(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
measure_cpu "warm-up-scrub" "$work/scrub.lua" 10 >/dev/null
measure_cpu "warm-up-plain" "$work/plain.lua" 10 >/dev/null
for round in $(seq "$rounds"); do
  if [ $((round % 2)) = 1 ]; then order="plain scrub"; else order="scrub plain"; fi
  for host in $order; do
    measure_cpu "$host round $round" "$work/$host.lua" "$seconds"
  done
done
median() { sort -g "$1" | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
p=$(median "$work/plain.rps")
s=$(median "$work/scrub.rps")
awk -v p="$p" -v s="$s" 'BEGIN {printf "median req/s: unscrubbed %.0f, scrubbed %.0f, cost %.1f %%\n", p, s, 100 * (p - s) / p}'
pc=$(median "$work/plain.cpu")
sc=$(median "$work/scrub.cpu")
awk -v p="$pc" -v s="$sc" 'BEGIN {printf "median CPU: unscrubbed %.1f us/request, scrubbed %.1f us/request, cost %.1f %%\n", p, s, 100 * (s - p) / p}'
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after the run"
