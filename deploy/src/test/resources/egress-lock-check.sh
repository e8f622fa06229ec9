#!/usr/bin/env bash
# Runs the egress-lock overlay's rules in a real network namespace and reports which connections pass.
# Two namespaces joined by a veth pair: "pod" (10.99.0.1, the rules installed) and "outside" (10.99.0.2, an HTTP
# server on 8080), both new and empty: nothing leaves this machine. In the pod, a server on 9464 runs as the
# supervisor's UID. Each check prints "CHECK <name> open|closed".
# Usage (root): egress-lock-check.sh RULES_SCRIPT JWEBSERVER SUPERVISOR_UID AGENT_UID
set -euo pipefail
rules=$1 jweb=$2 sup_uid=$3 agent_uid=$4
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
  # each background process leads its own session (setsid): kill the session, launcher and JVM alike
  for p in "${pids[@]}"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
own=$(readlink /proc/self/ns/net)
newns() { # newns VAR: a process in a new, empty network namespace; its PID in VAR
  setsid unshare --net sleep 600 </dev/null >/dev/null 2>&1 &
  local p=$!
  pids+=("$p")
  for _ in $(seq 200); do
    if [ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" != "$own" ]; then printf -v "$1" %s "$p"; return; fi
    sleep 0.05
  done
  echo "error: no new network namespace" >&2
  exit 1
}
newns pod
newns outside
inpod() { nsenter -t "$pod" -n "$@"; }
out() { nsenter -t "$outside" -n "$@"; }

inpod ip link add vpod type veth peer name vout
inpod ip link set vout netns "$outside"
inpod ip addr add 10.99.0.1/24 dev vpod
inpod ip link set vpod up
inpod ip link set lo up
out ip addr add 10.99.0.2/24 dev vout
out ip link set vout up
out ip link set lo up

inpod sh -ec "$(cat "$rules")"

mkdir -p "$work/www"
chmod 755 "$work/www"
setsid nsenter -t "$outside" -n "$jweb" -b 10.99.0.2 -p 8080 -d "$work/www" </dev/null >"$work/outside.log" 2>&1 &
pids+=($!)
setsid nsenter -t "$pod" -n setpriv --reuid "$sup_uid" --regid "$sup_uid" --clear-groups \
  "$jweb" -b 0.0.0.0 -p 9464 -d "$work/www" </dev/null >"$work/admin.log" 2>&1 &
pids+=($!)
for log in outside admin; do
  for _ in $(seq 1200); do
    grep -q 'Serving' "$work/$log.log" 2>/dev/null && break
    sleep 0.1
  done
  grep -q 'Serving' "$work/$log.log" || { echo "error: the $log server did not start:" >&2; cat "$work/$log.log" >&2; exit 1; }
done

check() { # check NAME NSRUNNER UID HOST PORT
  local name=$1 runner=$2 uid=$3 host=$4 port=$5
  if $runner setpriv --reuid "$uid" --regid "$uid" --clear-groups \
      timeout 10 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null; then
    echo "CHECK $name open"
  else
    echo "CHECK $name closed"
  fi
}
check agent-to-outside inpod "$agent_uid" 10.99.0.2 8080
check other-uid-to-outside inpod 0 10.99.0.2 8080
check supervisor-to-outside inpod "$sup_uid" 10.99.0.2 8080
check agent-to-supervisor-on-loopback inpod "$agent_uid" 127.0.0.1 9464
check outside-to-admin-port out 0 10.99.0.1 9464
