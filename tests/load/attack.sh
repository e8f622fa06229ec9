#!/usr/bin/env bash
# Hostile-client check of `supervisor run` from the runtime image (not part of the test suite; issue 18). Starts a
# loopback upstream and the supervisor (the regex stage on every host, so every request with a body is buffered for
# the chain; admin listener on a free port), then runs each attack from 127.0.0.1 while a victim client on 127.0.0.2
# (another address) and another victim in a process of its own on 127.0.0.1 (another process of the attacker's
# address) send GET and small POST requests through the chain and probe /health/live (tests/load/Attack.java):
#   none         no attack (the baseline)
#   heads        4000 connections (ATTACK_HEADS), each a 60 KiB header section without its final CRLF, then silence
#   slow-bodies  48 uploads declaring Content-Length 4194304 and sending a byte a second
#   uploads      100 concurrent 4 MiB uploads, each connection posting again when answered
#   dense        8 concurrent 4 MB text/html bodies of "&a;" (the costliest to read per byte), each connection posting
#                again when answered; each is refused at the regex stage's deadline (403 stage_timeout)
#   spin         8 clients sending requests to a host whose chain is the fixture plugin fixtures/spin, a stage that
#                spins on the CPU ignoring interrupts (each stuck stage burns a core until the supervisor exits)
# Bounded: SECONDS per attack (default 15, at most 120); only 127.0.0.1/127.0.0.2; the processes it starts are
# stopped on exit. Afterwards it checks that the supervisor still answers /health/live, then sends SIGTERM and
# reports how long the supervisor took to exit (at most 30 s; run spin last, so it stops with stuck stages).
# IMAGE (default jlink/target/image, built if missing) is the image to run.
# Usage: tests/load/attack.sh [seconds] [attack...]
# SUPERVISOR_LIMITS: TOML lines for the gateway configuration's [openshell.supervisor.limits] table, to try other
# limits (for example SUPERVISOR_LIMITS='body_buffer_client_share_percent = 5').
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-15}
shift || true
attacks=("${@:-none heads slow-bodies uploads dense spin}")
read -r -a attacks <<<"${attacks[*]}"
if ! [[ "$seconds" =~ ^[0-9]+$ && "$seconds" -ge 3 && "$seconds" -le 120 ]]; then
  echo "seconds must be 3..120" >&2
  exit 2
fi
. tests/load/load-lib.sh
load_setup no-wrk
spin_jar=$(ls tests/fixture-plugins/spin/target/fixture-spin-*.jar 2>/dev/null | head -1)
[ -n "$spin_jar" ] || ./dev.sh build
spin_jar=$(ls tests/fixture-plugins/spin/target/fixture-spin-*.jar | head -1)

"$JAVA_HOME/bin/java" tests/load/LoadUpstream.java >"$work/upstream.out" 2>&1 &
pids+=($!)
up=$(await_port "$work/upstream.out" 'upstream listening on 127\.0\.0\.1:[0-9]+')
admin=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')  # a free port

cat >"$work/policy.yaml" <<YAML
version: 1
network_policies:
  load:
    name: attack check
    endpoints:
      - host: "**"
        ports: [$up]
network_middlewares:
  spin:
    middleware: fixtures/spin
    order: 5
    on_error: fail_closed
    endpoints:
      include: [spin.test]
  secrets:
    name: Redact known secret formats
    middleware: openshell/regex
    order: 10
    config:
      mode: redact
    on_error: fail_closed
    endpoints:
      include: ["**"]
      exclude: [spin.test]
YAML
mkdir -p "$work/plugins"
cp "$spin_jar" "$work/plugins/fixture-spin.jar"

cat >"$work/gateway.toml" <<TOML
[openshell.supervisor.limits]
${SUPERVISOR_LIMITS:-}
[openshell.supervisor.network]
allow_loopback_upstreams = true
[openshell.supervisor.network.static_hosts]
"load.test" = "127.0.0.1"
"spin.test" = "127.0.0.1"
[[openshell.supervisor.plugin_pins]]
entry = "fixture-spin.jar"
sha256 = "$(sha256sum "$work/plugins/fixture-spin.jar" | cut -d' ' -f1)"
TOML
admin_listen="127.0.0.1:$admin"
start_supervisor "$work/policy.yaml" "$work/gateway.toml" --plugins "$work/plugins"
sup=${pids[-1]}

echo "attack check: ${seconds} s per attack, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) before"
for a in "${attacks[@]}"; do
  # two victims, each a process of its own: another address (127.0.0.2), and another process of the attacker's
  # address (127.0.0.1)
  victims=()
  for from in 127.0.0.2 127.0.0.1; do
    "$JAVA_HOME/bin/java" tests/load/Attack.java victim "$a" "$proxy" "$up" "$admin" "$seconds" "$from" \
      >"$work/victim-$a-$from.out" 2>&1 &
    victims+=($!)
    pids+=($!)
  done
  "$JAVA_HOME/bin/java" tests/load/Attack.java "$a" "$proxy" "$up" "$admin" "$seconds" | sed 's/^RESULT //'
  for v in "${victims[@]}"; do
    wait "$v" || true
  done
  cat "$work/victim-$a-127.0.0.2.out" "$work/victim-$a-127.0.0.1.out" | sed 's/^RESULT //'
  if ! kill -0 "$sup" 2>/dev/null; then
    echo "the supervisor is gone after attack $a" >&2
    tail -20 "$work/supervisor.err" >&2
    exit 1
  fi
done
echo "refusals by reason:"
curl -s --max-time 5 "http://127.0.0.1:$admin/metrics" | grep -E '^supervisor_(refused|requests_shed)_total' || echo "  none"
echo "failures by platform code:"
curl -s --max-time 5 "http://127.0.0.1:$admin/metrics" | grep '^supervisor_failures_total' || echo "  none"
echo "stage threads stuck:"
curl -s --max-time 5 "http://127.0.0.1:$admin/metrics" | grep -E '^supervisor_(stage_stuck_total|binding_unavailable)' \
  || echo "  none"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) after; supervisor still running: yes"
start=$(date +%s%N)
kill -TERM "$sup"
for i in $(seq 300); do
  kill -0 "$sup" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$sup" 2>/dev/null; then
  echo "SIGTERM: the supervisor was still running after 30 s" >&2
  exit 1
fi
echo "SIGTERM: the supervisor exited after $(( ($(date +%s%N) - start) / 1000000 )) ms"
