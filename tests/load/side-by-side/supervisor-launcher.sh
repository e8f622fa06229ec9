#!/usr/bin/env bash
# SUPERVISOR_LAUNCHER for tests/data/bench-peers/run_anchors.sh, used by tests/load/bench-side-by-side.sh.
#
# run_anchors.sh calls:  LAUNCHER run --policy P --gateway-config G --listen A --state-dir D --audit-log F
# This script execs the image's `bin/supervisor run` with the same arguments plus `--admin-listen 127.0.0.1:0`
# (the default admin port 9464 may be held by another supervisor on the machine, which would stop start-up; the admin
# listener still runs, on a free port).
#
# With SUPERVISOR_EXT_STAGE=1 (target "supervisor_ext"): first starts Privacy Guard (`bin/supervisor privacy-guard`)
# on 127.0.0.1:13140, waits at most 20 s for its listening line, and replaces --policy / --gateway-config with
# ext-policy.yaml / ext-gateway.toml next to this script (one external stage selected for 127.0.0.1). The exec keeps
# this PID, so Privacy Guard is a child of the supervisor's PID: the harness counts its RSS and CPU with the
# supervisor's. Privacy Guard gets SIGTERM when that process ends, however it ends (setpriv --pdeathsig).
#
# Env: SUPERVISOR_IMAGE    runtime image (default: jlink/target/image of this repository)
#      SUPERVISOR_EXT_STAGE 1 = add the Privacy Guard stage (default 0)
#      PRIVACY_GUARD_LOG   Privacy Guard's output (default ${TMPDIR:-/tmp}/supervisor-ext-privacy-guard.out)
set -u
here=$(cd "$(dirname "$0")" && pwd)
image=${SUPERVISOR_IMAGE:-$here/../../../jlink/target/image}
ext=${SUPERVISOR_EXT_STAGE:-0}
pg_addr=127.0.0.1:13140                  # must match grpc_endpoint in ext-gateway.toml

if [ "${1:-}" != run ]; then
  echo "usage: $0 run [supervisor run options]   (SUPERVISOR_EXT_STAGE=1 adds the Privacy Guard stage)" >&2
  exit 2
fi
shift
args=(run)
admin=0
while [ $# -gt 0 ]; do
  case $1 in
    --policy|--gateway-config)
      [ $# -ge 2 ] || { echo "$0: $1 needs a value" >&2; exit 2; }
      [ "$ext" = 1 ] || args+=("$1" "$2")
      shift 2 ;;
    --admin-listen|--admin-listen=*)
      admin=1; args+=("$1"); shift ;;
    *)
      args+=("$1"); shift ;;
  esac
done
[ "$admin" = 1 ] || args+=(--admin-listen 127.0.0.1:0)

if [ "$ext" = 1 ]; then
  args+=(--policy "$here/ext-policy.yaml" --gateway-config "$here/ext-gateway.toml")
  command -v setpriv >/dev/null || { echo "$0: setpriv (util-linux) is needed for SUPERVISOR_EXT_STAGE=1" >&2; exit 1; }
  pglog=${PRIVACY_GUARD_LOG:-${TMPDIR:-/tmp}/supervisor-ext-privacy-guard.out}
  setpriv --pdeathsig TERM -- "$image/bin/supervisor" privacy-guard --listen "$pg_addr" </dev/null >"$pglog" 2>&1 &
  pg=$!
  ready=0
  for _ in $(seq 1 200); do                 # at most 20 s
    if grep -q '^privacy-guard listening on ' "$pglog"; then ready=1; break; fi
    kill -0 "$pg" 2>/dev/null || break
    sleep 0.1
  done
  if [ "$ready" != 1 ]; then
    echo "$0: privacy-guard did not report listening on $pg_addr within 20 s; its output ($pglog):" >&2
    tail -5 "$pglog" >&2
    kill -TERM "$pg" 2>/dev/null
    wait "$pg" 2>/dev/null
    exit 1
  fi
fi
exec "$image/bin/supervisor" "${args[@]}"
