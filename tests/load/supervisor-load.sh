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
# L7 rounds.
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
JAVA_HOME="${JAVA_HOME:-$(scripts/find-jdk.sh)}"
export JAVA_HOME
image=${IMAGE:-jlink/target/image}
[ -x "$image/bin/supervisor" ] || ./dev.sh build
if ! command -v wrk >/dev/null 2>&1; then
  echo "==> installing wrk (Debian package)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk
fi

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT

# waits (at most 60 s) until FILE holds a line matching REGEX, then prints the port at its end
await_port() {
  local file=$1 regex=$2 i
  for i in $(seq 600); do
    if grep -Eq "$regex" "$file" 2>/dev/null; then
      grep -Eo "$regex" "$file" | head -1 | grep -Eo '[0-9]+$'
      return 0
    fi
    sleep 0.1
  done
  echo "timed out waiting for '$regex' in $file:" >&2
  cat "$file" >&2
  return 1
}

"$JAVA_HOME/bin/java" tests/load/LoadUpstream.java >"$work/upstream.out" 2>&1 &
pids+=($!)
up=$(await_port "$work/upstream.out" 'upstream listening on 127\.0\.0\.1:[0-9]+')

cat >"$work/policy.yaml" <<YAML
version: 1
network_policies:
  load:
    name: load check
    endpoints:
      - host: "**"
        ports: [$up]
  rest:
    name: L7 REST endpoint
    endpoints:
      - host: l7.test
        ports: [$up]
        protocol: rest
        enforcement: enforce
        access: read-write
network_middlewares:
  secrets:
    name: Redact known secret formats
    middleware: openshell/regex
    order: 10
    config:
      mode: redact
    on_error: fail_closed
    endpoints:
      include: ["**"]
YAML
cat >"$work/gateway.toml" <<TOML
[openshell.supervisor.network]
allow_loopback_upstreams = true
[openshell.supervisor.network.static_hosts]
"load.test" = "127.0.0.1"
"l7.test" = "127.0.0.1"
TOML
"$image/bin/supervisor" run --policy "$work/policy.yaml" --gateway-config "$work/gateway.toml" \
  --listen 127.0.0.1:0 --state-dir "$work/state" --audit-log "$work/audit.jsonl" --admin-listen off \
  >"$work/supervisor.out" 2>"$work/supervisor.err" &
pids+=($!)
proxy=$(await_port "$work/supervisor.out" 'supervisor listening on 127\.0\.0\.1:[0-9]+') || {
  cat "$work/supervisor.err" >&2
  exit 1
}

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
lua() { # $1 = request-target, $2 = Host
  cat <<LUA
wrk.method = "POST"
wrk.path = "$1"
wrk.body = '$body'
wrk.headers["Host"] = "$2"
wrk.headers["Content-Type"] = "application/json"
local max = $((max / threads))
local n = 0
local bad = 0
function response(status, headers, body)
  n = n + 1
  if status ~= 200 then bad = bad + 1 end
  if n >= max then wrk.thread:stop() end
end
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %.1f %.3f %.3f %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout))
end
LUA
}
lua "/v1/chat/completions" "load.test:$up" >"$work/direct.lua"
lua "http://load.test:$up/v1/chat/completions" "load.test:$up" >"$work/proxy.lua"
lua "http://l7.test:$up/v1/chat/completions" "l7.test:$up" >"$work/proxy-l7.lua"

measure() { # name, url, script, seconds
  local out
  out=$(wrk -t "$threads" -c "$conns" -d "${4}s" --timeout 10s -s "$3" "$2")
  local line
  line=$(grep '^RESULT ' <<<"$out") || { echo "$out" >&2; return 1; }
  read -r _ n rps p50 p99 errors <<<"$line"
  if [ "$errors" != 0 ]; then
    echo "$1: $errors errors or non-200 answers" >&2
    echo "$out" >&2
    return 1
  fi
  printf '%-36s %9d requests %9.0f req/s   p50 %7.3f ms   p99 %7.3f ms\n' "$1" "$n" "$rps" "$p50" "$p99"
  if [ "$n" -ge "$max" ]; then
    echo "  (stopped at the request cap before ${4} s: req/s above is understated)"
  fi
}

echo "load check: ${seconds} s per run, ${conns} keep-alive connections, ${threads} wrk threads, $(nproc) CPUs," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
measure "warm-up direct" "http://127.0.0.1:$up" "$work/direct.lua" 3 >/dev/null
measure "warm-up supervisor" "http://127.0.0.1:$proxy" "$work/proxy.lua" 5 >/dev/null
# the log rotates at 100 MiB: count over every file of it
redactions() { cat "$work"/audit.jsonl* | grep -c '"transformed":true' || true; }
before=$(redactions)
measure "direct to the upstream" "http://127.0.0.1:$up" "$work/direct.lua" "$seconds"
measure "through supervisor run (regex)" "http://127.0.0.1:$proxy" "$work/proxy.lua" "$seconds"
echo "audit log: $(($(redactions) - before)) redacting stage invocations during the measured run"
[ "${L7:-1}" = 0 ] && exit 0
measure "warm-up supervisor (L7 rest)" "http://127.0.0.1:$proxy" "$work/proxy-l7.lua" 3 >/dev/null
for round in 1 2; do
  measure "supervisor (regex), round $round" "http://127.0.0.1:$proxy" "$work/proxy.lua" "$seconds"
  measure "supervisor (regex + L7 rest), round $round" "http://127.0.0.1:$proxy" "$work/proxy-l7.lua" "$seconds"
done
echo "audit log: $(cat "$work"/audit.jsonl* | grep -c '"layer":"l7"' || true) L7 decision events in all"
