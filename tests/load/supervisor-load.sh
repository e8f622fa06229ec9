#!/usr/bin/env bash
# Load check of `supervisor run` from the runtime image (not part of the test suite). On one machine, in one run:
# wrk sends the same POST (a ~250-byte chat completion carrying one fake API key) straight to a loopback upstream, then
# through the supervisor with a default-like policy (every host on the upstream's port; openshell/regex redacting on
# every host, fail_closed; audit log on), and prints requests/s and p50/p99 latency for both; then the same through the
# supervisor to a host whose endpoint declares L7 policy (protocol: rest, access: read-write, enforce), alternating
# with the plain host, so that the cost of the L7 decision (canonical target, rules, its audit event) shows.
# BODY_BYTES (default: the chat completion as it is, ~250 bytes) pads the request body to that many bytes, with 'x'
# or, with PAD=prose, with lines of prose, code and configuration (no secret: what a scanner reads in practice).
# IMAGE (default jlink/target/image) is the image to run, so two builds can be compared on one machine; L7=0 skips the
# L7 rounds; IDENTITY_MODE (default: the gateway's default, enforce) sets [openshell.supervisor.identity] mode, so
# that "endpoint-only" shows what identifying each fresh connection costs.
# FRESH_ROUNDS=N (default 0: none) adds, after the measured run, N rounds of CONNECTIONS fresh connections opened at
# once with one POST each (tests/load/FreshConnections.java), and prints p50/p90/p99/max of those first requests: what
# identifying each new connection's process adds.
# Bounded: each measured run lasts SECONDS (default 10, at most 120) and stops early after MAX requests (default
# 2000000); CONNECTIONS keep-alive connections (default 16) on 2 wrk threads. Processes it starts are stopped on exit.
# Needs wrk (Debian package; installed if missing and run as root) and the image (built if missing).
# Usage: tests/load/supervisor-load.sh [seconds] [connections] [max requests]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-10}
conns=${2:-16}
max=${3:-2000000}
threads=2
if ! [[ "$seconds" =~ ^[0-9]+$ && "$seconds" -ge 1 && "$seconds" -le 120 ]]; then
  echo "seconds must be 1..120" >&2
  exit 2
fi
if ! [[ "$conns" =~ ^[0-9]+$ && "$conns" -ge $threads && "$conns" -le 1000 ]]; then
  echo "connections must be $threads..1000" >&2
  exit 2
fi
if ! [[ "$max" =~ ^[0-9]+$ && "$max" -ge 1 ]]; then
  echo "max requests must be a positive number" >&2
  exit 2
fi
. tests/load/load-lib.sh
load_setup

load_regex_l7_files
if [ -n "${IDENTITY_MODE:-}" ]; then
  [[ "$IDENTITY_MODE" =~ ^(enforce|endpoint-only)$ ]] || {
    echo "IDENTITY_MODE must be enforce or endpoint-only" >&2
    exit 2
  }
  printf '[openshell.supervisor.identity]\nmode = "%s"\n' "$IDENTITY_MODE" >>"$work/gateway.toml"
fi
start_supervisor "$work/policy.yaml" "$work/gateway.toml"

# the request: a fake OpenAI key in a chat completion (the regex stage redacts it on every proxied request)
body='{"model":"gpt-4o","messages":[{"role":"system","content":"You are a deployment assistant."},{"role":"user","content":"Deploy the service with this key: sk-proj-LOADtest0123456789abcdefghijklmnopqrstuvwxyzAB and report back."}]}'
if [ -n "${BODY_BYTES:-}" ]; then
  pad=$((BODY_BYTES - ${#body} - 13))
  [ "$pad" -ge 0 ] || { echo "BODY_BYTES must be at least $((${#body} + 13))" >&2; exit 2; }
  if [ "${PAD:-x}" = prose ]; then
    line='The agent drafts a reply; def load(path): config = read(path) # the token list. SELECT id FROM t; '
    padding=$line
    while [ ${#padding} -lt "$pad" ]; do padding=$padding$padding; done
    padding=${padding:0:$pad}
  else
    padding=$(head -c "$pad" /dev/zero | tr '\0' x)
  fi
  body="${body%\}}"',"padding":"'"$padding"'"}'
fi
wrk_script POST "/v1/chat/completions" "load.test:$up" "$body" >"$work/direct.lua"
wrk_script POST "http://load.test:$up/v1/chat/completions" "load.test:$up" "$body" >"$work/proxy.lua"
wrk_script POST "http://l7.test:$up/v1/chat/completions" "l7.test:$up" "$body" >"$work/proxy-l7.lua"

echo "load check: ${seconds} s per run, ${conns} keep-alive connections, ${threads} wrk threads, $(nproc) CPUs," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
measure "warm-up direct" "http://127.0.0.1:$up" "$work/direct.lua" 3 >/dev/null
measure "warm-up supervisor" "http://127.0.0.1:$proxy" "$work/proxy.lua" 5 >/dev/null
# the log rotates at 100 MiB: count over every file of it
redactions() { cat "$work"/audit/audit.jsonl* | grep -c '"transformed":true' || true; }
before=$(redactions)
measure "direct to the upstream" "http://127.0.0.1:$up" "$work/direct.lua" "$seconds"
measure "through supervisor run (regex)" "http://127.0.0.1:$proxy" "$work/proxy.lua" "$seconds"
echo "audit log: $(($(redactions) - before)) redacting stage invocations during the measured run"
if [ "${FRESH_ROUNDS:-0}" -gt 0 ]; then
  # fresh connections: each round opens $conns connections at once and sends one POST on each (FreshConnections.java);
  # IPv4 sockets, as wrk, curl and most clients make them (a JVM makes dual-stack ones by default)
  printf '%s' "$body" >"$work/body.json"
  line=$("$JAVA_HOME/bin/java" -Djava.net.preferIPv4Stack=true tests/load/FreshConnections.java "$proxy" \
    "http://load.test:$up/v1/chat/completions" "load.test:$up" "$work/body.json" "$conns" "$FRESH_ROUNDS" \
    | grep '^RESULT ')
  read -r _ n p50 p90 p99 pmax bad <<<"$line"
  printf '%-36s %9d first requests   p50 %7.3f ms   p90 %7.3f ms   p99 %7.3f ms   max %7.3f ms   non-200 %d\n' \
    "fresh connections, ${FRESH_ROUNDS} rounds" "$n" "$p50" "$p90" "$p99" "$pmax" "$bad"
fi
[ "${L7:-1}" = 0 ] && exit 0
measure "warm-up supervisor (L7 rest)" "http://127.0.0.1:$proxy" "$work/proxy-l7.lua" 3 >/dev/null
for round in 1 2; do
  measure "supervisor (regex), round $round" "http://127.0.0.1:$proxy" "$work/proxy.lua" "$seconds"
  measure "supervisor (regex + L7 rest), round $round" "http://127.0.0.1:$proxy" "$work/proxy-l7.lua" "$seconds"
done
echo "audit log: $(cat "$work"/audit/audit.jsonl* | grep -c '"layer":"l7"' || true) L7 decision events in all"
