#!/usr/bin/env python3
"""Start-up time of `supervisor run`: from launching the process to its line "supervisor listening on" on standard
output (RunCommand prints it once the proxy listens). Used by tests/load/bench-side-by-side.sh.

Usage: startup.py COUNT TIMEOUT_S LOGDIR -- COMMAND...
Starts COMMAND COUNT times, one after the other; each start is stopped (SIGTERM, then SIGKILL after 10 s) as soon as
the line is read or TIMEOUT_S seconds have passed. Prints one duration in seconds per line. Exit 1 if a start fails
or times out (its standard error is kept in LOGDIR/start-N.err).
"""
import os
import selectors
import signal
import subprocess
import sys
import time

READY = b"supervisor listening on "


def one_start(cmd, timeout, err_path):
    with open(err_path, "wb") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err)
        try:
            sel = selectors.DefaultSelector()
            sel.register(proc.stdout, selectors.EVENT_READ)
            seen = b""
            while True:
                left = t0 + timeout - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(proc.stdout.fileno(), 4096)
                if not chunk:          # the process closed its output: it exited without the line
                    return None
                seen += chunk
                if READY in seen:
                    return time.monotonic() - t0
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            proc.stdout.close()


def main():
    if len(sys.argv) < 6 or sys.argv[4] != "--":
        sys.exit(__doc__)
    count, timeout, logdir, cmd = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[5:]
    # SIGTERM (and SIGINT when not ignored) unwind through one_start's finally, which stops the supervisor
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(logdir, exist_ok=True)
    for i in range(1, count + 1):
        took = one_start(cmd, timeout, os.path.join(logdir, f"start-{i}.err"))
        if took is None:
            print(f"start {i}: no '{READY.decode().strip()}' line within {timeout:.0f} s "
                  f"(see {logdir}/start-{i}.err)", file=sys.stderr)
            sys.exit(1)
        print(f"{took:.3f}", flush=True)


if __name__ == "__main__":
    main()
