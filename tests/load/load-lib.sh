# Shared set-up of the tests/load scripts that run `supervisor run` from the image under wrk (sourced, not run):
# the JDK, the image (built if missing), wrk (Debian package, installed if missing when run as root), a work directory
# and the processes started in the background (both removed on exit), waiting for a "listening on" line, starting the
# supervisor, writing a wrk script (or only its done() function) and one bounded wrk measurement. KEEP_WORK=1 keeps the work directory (the
# supervisor's output and audit log) for a look after the run.
# `load_setup no-wrk` skips wrk, for a script that does not measure with it.
# Before `measure`, the sourcing script sets: threads (wrk threads), conns (keep-alive connections), max (a request
# cap over all threads). Expects `set -euo pipefail` and the repository root as the working directory.

load_setup() {
  JAVA_HOME="${JAVA_HOME:-$(scripts/find-jdk.sh)}"
  export JAVA_HOME
  image=${IMAGE:-jlink/target/image}
  [ -x "$image/bin/supervisor" ] || ./dev.sh build
  if [ "${1:-}" != no-wrk ] && ! command -v wrk >/dev/null 2>&1; then
    echo "==> installing wrk (Debian package)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk
  fi
  work=$(mktemp -d)
  pids=()
  trap load_cleanup EXIT
}

load_cleanup() {
  for p in "${pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    wait "$p" 2>/dev/null || true
  done
  if [ "${KEEP_WORK:-0}" = 1 ]; then
    echo "work directory kept: $work" >&2
  else
    rm -rf "$work"
  fi
}

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

# starts `supervisor run` with POLICY and GATEWAY (audit log on, in $work/audit/; admin listener off, or on
# $admin_listen when set) and any further arguments (e.g. --plugins DIR), and sets proxy to its port; its PID is the
# last of pids. The audit log has a directory of its own: the policy watcher watches the policy file's directory, and
# an audit log written there wakes it (and the JDK's watch service thread) at every batch of lines, about 7 % of the
# CPU under POST 2 KiB with regex (docs/BENCHMARKS.md, "Profiles of the forward path").
start_supervisor() {
  local policy=$1 gateway=$2
  shift 2
  mkdir -p "$work/audit"
  "$image/bin/supervisor" run --policy "$policy" --gateway-config "$gateway" \
    --listen 127.0.0.1:0 --state-dir "$work/state" --audit-log "$work/audit/audit.jsonl" \
    --admin-listen "${admin_listen:-off}" "$@" >"$work/supervisor.out" 2>"$work/supervisor.err" &
  pids+=($!)
  proxy=$(await_port "$work/supervisor.out" 'supervisor listening on 127\.0\.0\.1:[0-9]+') || {
    cat "$work/supervisor.err" >&2
    exit 1
  }
}

# prints a wrk script: $1 = method, $2 = request-target, $3 = Host, $4 = JSON body (empty: none; @FILE: the file's
# bytes); every answer but 200 counts as an error, and a thread stops after its share of max requests
wrk_script() {
  local body=""
  if [ -n "$4" ] && [ "${4#@}" != "$4" ]; then
    body="local f = assert(io.open(\"${4#@}\", \"rb\"))
wrk.body = f:read(\"*a\")
f:close()
wrk.headers[\"Content-Type\"] = \"application/json\""
  elif [ -n "$4" ]; then
    body="wrk.body = '$4'
wrk.headers[\"Content-Type\"] = \"application/json\""
  fi
  cat <<LUA
wrk.method = "$1"
wrk.path = "$2"
wrk.headers["Host"] = "$3"
$body
local max = $((max / threads))
local n = 0
local bad = 0
function response(status, headers, body)
  n = n + 1
  if status ~= 200 then bad = bad + 1 end
  if n >= max then wrk.thread:stop() end
end
$(wrk_done)
LUA
}

# prints wrk's done() in Lua, for every wrk script of these scripts: one line "RESULT requests req/s p50 p99 errors"
# (latencies in ms; errors: non-2xx/3xx answers, connect, read, write and timeout errors), which measure reads
wrk_done() {
  cat <<'LUA'
function done(summary, latency, requests)
  io.write(string.format("RESULT %d %.1f %.3f %.3f %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout))
end
LUA
}

# one wrk run: $1 = name, $2 = URL, $3 = wrk script, $4 = seconds; prints requests, req/s, p50 and p99 (ms); fails
# on any error or non-200 answer unless ALLOW_ERRORS=1 (then the count is printed with the figures)
measure() {
  local out
  out=$(wrk -t "$threads" -c "$conns" -d "${4}s" --timeout 10s -s "$3" "$2")
  local line
  line=$(grep '^RESULT ' <<<"$out") || { echo "$out" >&2; return 1; }
  read -r _ n rps p50 p99 errors <<<"$line"
  if [ "$errors" != 0 ] && [ "${ALLOW_ERRORS:-0}" != 1 ]; then
    echo "$1: $errors errors or non-200 answers" >&2
    echo "$out" >&2
    return 1
  fi
  printf '%-36s %9d requests %9.0f req/s   p50 %7.3f ms   p99 %7.3f ms%s\n' "$1" "$n" "$rps" "$p50" "$p99" \
    "$([ "$errors" = 0 ] || echo "   $errors ERRORS or non-200")"
  if [ "$n" -ge "$max" ]; then
    echo "  (stopped at the request cap before ${4} s: req/s above is understated)"
  fi
}

# Starts tests/load/LoadUpstream.java (its port in $up) and writes $work/policy.yaml and $work/gateway.toml:
# openshell/regex redacting on every host (fail_closed), and the L7 REST host l7.test (supervisor-load.sh, l7-cpu.sh)
load_regex_l7_files() {
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
}
