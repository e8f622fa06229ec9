#!/usr/bin/env bash
# Soak of `supervisor run` from the runtime image (issue 41; not part of the test suite). One supervisor, one loopback
# upstream (LoadUpstream), for SECONDS (default 3600) at a paced rate (about 1,500 requests/s on a quiet 2-core
# machine with the defaults):
#   - GET through an L7 REST endpoint (protocol rest, enforce) with a credential placeholder in Authorization: the
#     supervisor injects the secret (allow_plaintext) and the upstream echoes it back in the body, so every such
#     response is scrubbed; wrk counts every response that still holds the secret (LEAKS) and every non-200;
#   - POST 2 KiB (a chat completion with one fake key) through `openshell/regex` redacting, fail_closed;
#   - a policy reload every RELOAD s (30): the policy file rewritten with another policy name (a new generation; a
#     change that enforces the same policy is not installed) and SIGHUP.
# Every SAMPLE s (10) it records the supervisor's RSS and open descriptors; after WARM s (60) and at the end, a heap
# class histogram (jcmd GC.class_histogram of the JDK that runs the scripts; it forces a full GC). The report: errors
# and leaks, descriptors (min and max after warm-up), RSS in minutes 10-20 against the last 10 minutes, reloads
# installed, both histograms' top 20. Written to OUT (default target/soak/<UTC stamp>) and printed.
# Knobs: SECONDS_TOTAL=3600 CONNS=8 (per wrk, two wrk) DELAY_MS=10 (pause per connection between requests)
#        RELOAD=30 SAMPLE=10 WARM=60 IMAGE=jlink/target/image OUT=dir
# Bounded: wrk runs SECONDS_TOTAL; every wait is capped; processes it starts are stopped on exit.
# Usage: tests/load/soak.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
total=${SECONDS_TOTAL:-3600}
conns=${CONNS:-8}
delay=${DELAY_MS:-10}
reload=${RELOAD:-30}
sample=${SAMPLE:-10}
warm=${WARM:-60}
for v in total conns delay reload sample warm; do
  [[ "${!v}" =~ ^[0-9]+$ && "${!v}" -ge 1 ]] || { echo "$v must be a positive whole number" >&2; exit 2; }
done
[ "$total" -le 86400 ] || { echo "SECONDS_TOTAL must be at most 86400" >&2; exit 2; }
[ "$warm" -lt "$total" ] || { echo "WARM must be below SECONDS_TOTAL" >&2; exit 2; }
OUT=${OUT:-target/soak/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
. tests/load/load-lib.sh
load_setup
trap 'exit 130' INT TERM

"$JAVA_HOME/bin/java" tests/load/LoadUpstream.java >"$work/upstream.out" 2>&1 &
pids+=($!)
up=$(await_port "$work/upstream.out" 'upstream listening on 127\.0\.0\.1:[0-9]+')

policy() { # generation
  cat <<YAML
version: 1
# generation $1
network_policies:
  api:
    name: L7 REST endpoint with a credential, generation $1
    endpoints:
      - host: api.soak.test
        ports: [$up]
        protocol: rest
        enforcement: enforce
        access: read-write
  chat:
    name: chat completions
    endpoints:
      - host: chat.soak.test
        ports: [$up]
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
}
policy 0 >"$work/policy.yaml"
cat >"$work/gateway.toml" <<TOML
[openshell.supervisor.network]
allow_loopback_upstreams = true
[openshell.supervisor.network.static_hosts]
"api.soak.test" = "127.0.0.1"
"chat.soak.test" = "127.0.0.1"
[[openshell.supervisor.credentials]]
name = "SOAK_KEY"
source = "env:SOAK_KEY"
hosts = ["api.soak.test"]
headers = ["authorization"]
allow_plaintext = true
TOML
secret="soak-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export SOAK_KEY=$secret
start_supervisor "$work/policy.yaml" "$work/gateway.toml"
unset SOAK_KEY
sup=${pids[-1]}

chat='{"model":"gpt-4o","messages":[{"role":"user","content":"Deploy with this key: sk-proj-SOAKtest0123456789abcdefghijklmnopqrstuvwxyzAB and report back."}],"padding":"'
chat=$chat$(head -c $((2048 - ${#chat} - 2)) /dev/zero | tr '\0' x)'"}'
lua() { # method, target, host, extra header lines, body
  cat <<LUA
wrk.method = "$1"
wrk.path = "$2"
wrk.headers["Host"] = "$3"
$4
${5:+wrk.body = '$5'}
function delay() return $delay end
function response(status, headers, body)
  if body ~= nil and string.find(body, "$secret", 1, true) then
    local f = io.open("$work/leaks", "a")
    f:write("leak\n")
    f:close()
  end
end
$(wrk_done)
LUA
}
# wrk's done() sees no per-thread Lua state: a response that still holds the secret appends a line to $work/leaks
lua GET "http://api.soak.test:$up/v1/objects" "api.soak.test:$up" \
  'wrk.headers["Authorization"] = "Bearer openshell:resolve:env:SOAK_KEY"
wrk.headers["x-echo-authorization"] = "1"' >"$work/get.lua"
lua POST "http://chat.soak.test:$up/v1/chat/completions" "chat.soak.test:$up" \
  'wrk.headers["Content-Type"] = "application/json"' "$chat" >"$work/post.lua"

# a first check by hand: the secret is injected, comes back, and is scrubbed
first=$(curl -s -m 10 -x "http://127.0.0.1:$proxy" -H "Authorization: Bearer openshell:resolve:env:SOAK_KEY" \
  -H 'x-echo-authorization: 1' "http://api.soak.test:$up/v1/objects")
case $first in
  *"$secret"*) echo "soak: the secret came back unscrubbed on the first request" >&2; exit 1 ;;
  *openshell:resolve:env:SOAK_KEY*) ;;
  *) echo "soak: unexpected first answer: ${first:0:200}" >&2; exit 1 ;;
esac

rss() { awk '/^VmRSS/{print $2}' "/proc/$sup/status"; }
fds() { find "/proc/$sup/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
histogram() { "$JAVA_HOME/bin/jcmd" "$sup" GC.class_histogram 2>&1 | head -24 >"$OUT/$1" || true; }

echo "soak: ${total} s, 2 x ${conns} connections, ${delay} ms between requests per connection, reload every" \
  "${reload} s, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/meta.txt"
echo "commit $(git rev-parse --short HEAD); image $image; started $(date -u +%FT%TZ)" >>"$OUT/meta.txt"
wrk -t1 -c"$conns" -d"${total}s" --timeout 10s -s "$work/get.lua" "http://127.0.0.1:$proxy" >"$OUT/get.txt" 2>&1 &
get_pid=$!
pids+=("$get_pid")
wrk -t1 -c"$conns" -d"${total}s" --timeout 10s -s "$work/post.lua" "http://127.0.0.1:$proxy" >"$OUT/post.txt" 2>&1 &
post_pid=$!
pids+=("$post_pid")

t0=$(date +%s)
next_reload=$((t0 + reload))
generation=0
: >"$OUT/samples.txt"
histogram_taken=0
while kill -0 "$get_pid" 2>/dev/null || kill -0 "$post_pid" 2>/dev/null; do
  now=$(date +%s)
  [ $((now - t0)) -le $((total + 60)) ] || break
  echo "$((now - t0)) $(rss) $(fds)" >>"$OUT/samples.txt"
  if [ "$histogram_taken" = 0 ] && [ $((now - t0)) -ge "$warm" ]; then
    histogram histogram-before.txt
    histogram_taken=1
  fi
  if [ "$now" -ge "$next_reload" ]; then
    generation=$((generation + 1))
    policy "$generation" >"$work/policy.next" && mv "$work/policy.next" "$work/policy.yaml"
    kill -HUP "$sup"
    next_reload=$((next_reload + reload))
  fi
  sleep "$sample"
done
wait "$get_pid" || true
wait "$post_pid" || true
histogram histogram-after.txt
echo "$(( $(date +%s) - t0 )) $(rss) $(fds)" >>"$OUT/samples.txt"
reloads=$(grep -c 'policy reloaded from' "$work/supervisor.err" || true)
leaks=$( [ -f "$work/leaks" ] && wc -l <"$work/leaks" || echo 0)
cp "$work/supervisor.err" "$OUT/supervisor.err"
{
  cat "$OUT/meta.txt"
  for w in get post; do
    line=$(grep '^RESULT ' "$OUT/$w.txt" || echo "RESULT - - - - missing")
    read -r _ n rps p50 p99 errors <<<"$line"
    echo "$w: $n requests, $rps req/s, p50 $p50 ms, p99 $p99 ms, errors and non-200: $errors"
  done
  echo "secret leaks in responses: $leaks"
  echo "policy generations installed ('policy reloaded' log lines): $reloads of $generation reloads sent"
  awk -v warm="$warm" -v total="$total" '
    $1 >= warm { if (min == "" || $3 < min) min = $3; if ($3 > max) max = $3 }
    $1 >= 600 && $1 < 1200 { a += $2; na++ }
    $1 >= total - 600 && $1 <= total { b += $2; nb++ }
    END {
      printf "open descriptors after warm-up: min %d, max %d\n", min, max
      if (na && nb) printf "RSS minutes 10-20: %.0f MiB (%d samples); last 10 minutes: %.0f MiB (%d samples); change %+.1f %%\n",
        a / na / 1024, na, b / nb / 1024, nb, 100 * (b / nb - a / na) / (a / na)
      else print "RSS: the run is shorter than 20 minutes, no comparison"
    }' "$OUT/samples.txt"
  echo "--- heap histogram after ${warm} s"; cat "$OUT/histogram-before.txt" 2>/dev/null || echo "(none)"
  echo "--- heap histogram at the end"; cat "$OUT/histogram-after.txt" 2>/dev/null || echo "(none)"
} | tee "$OUT/report.txt"
