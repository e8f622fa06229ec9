#!/usr/bin/env python3
"""The report of tests/load/bench-side-by-side.sh: reads its results directory, prints the report.

Usage: report.py OUT_DIR

Reads (all written by bench-side-by-side.sh): meta.txt (key=value), results-run*.csv (run_anchors.sh rows of each
run, supervisor_ext merged in), rss/ and rss-nomw/ (run_anchors.sh results of the concurrent 1 MiB uploads: CSV and
raw/*.rss samples), startup.txt (one start-up time in seconds per line), ext-latency.txt
(tests/bench/external-stage-latency.sh output), ext-check/result.txt (key=value), noise.txt (runN-start=req/s and
runN-end=req/s of the noise probes: direct GET, 32 connections).

Two target sections: issue 10's, then issue 23's (with the noise check of each run).
"""
import csv
import glob
import os
import re
import statistics
import sys

OUT = sys.argv[1] if len(sys.argv) == 2 else sys.exit(__doc__)
GIB_MIB = 1024


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        for line in open(path, encoding="utf-8"):
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                kv[k] = v
    return kv


def shed_or_none(row):
    """503 middleware_admission_exhausted answers the supervisor counted over the window (run_anchors.sh's shed column,
    from supervisor_requests_shed_total); None for other targets ("NA") and for results without the column."""
    try:
        return int(row.get("shed") or "")
    except ValueError:
        return None


def shed(row):
    """shed_or_none(row), 0 when unknown."""
    return shed_or_none(row) or 0


def errors(row):
    """non-2xx answers that were not shed + wrk socket errors (connect/read/write/timeout), e.g. sock_err
    "c0/r12/w0/t3" or "0". A shed answer is the supervisor's middleware work bound at work (by design), counted apart;
    the supervisor's count may exceed wrk's by the requests in flight when wrk stopped, hence the floor at 0."""
    return max(0, int(row["non2xx"] or 0) - shed(row)) + sum(int(n) for n in re.findall(r"\d+", row["sock_err"] or "0"))


def failed(row):
    """every answer that was not a success, shed ones included: the 1 MiB upload checks need all of them served."""
    return errors(row) + shed(row)


def mostly_read_errors(row):
    """wrk counts a connection the proxy closes after its answer as a read error: one per request for a proxy
    without client keep-alive (tinyproxy here). Those requests did complete."""
    m = re.search(r"r(\d+)", row["sock_err"] or "")
    return m is not None and int(row["requests"] or 0) > 0 and int(m.group(1)) >= 0.9 * int(row["requests"])


def rss_total(field):
    """peak_rss_mib is one figure per watched process joined with '+' (squid_icap: squid+c-icap)."""
    try:
        return sum(int(x) for x in field.split("+"))
    except ValueError:
        return None


def opens_per_request(row):
    """the harness's tcp_opens_per_req (its table's conn/r): TCP connect()s on the host per completed request; None
    when it could not count (no request completed)."""
    try:
        return float(row["tcp_opens_per_req"])
    except (KeyError, TypeError, ValueError):
        return None


def upstream_opens_per_request(row):
    """conn/r without wrk's own connections (it opens one per connection at the start of each window): the
    proxy's upstream opens per request, plus any client reconnection. None when there is no count."""
    opr, reqs = opens_per_request(row), int(row["requests"] or 0)
    return None if opr is None or reqs <= 0 else max(0.0, opr - int(row["conns"]) / reqs)


def fmt(x, spec="{:.0f}", none="-"):
    return none if x is None else spec.format(x)


# ---------------------------------------------------------------- the table, aggregated over runs
meta = read_kv(os.path.join(OUT, "meta.txt"))
runs = [list(csv.DictReader(open(p, encoding="utf-8")))
        for p in sorted(glob.glob(os.path.join(OUT, "results-run*.csv")),
                        key=lambda p: int(re.search(r"run(\d+)", p).group(1)))]
keys = []
rows = {}
for run in runs:
    for r in run:
        k = (r["target"], r["shape"], int(r["conns"]))
        if k not in rows:
            keys.append(k)
            rows[k] = []
        rows[k].append(r)

agg = {}
for k in keys:
    rs = rows[k]
    rps = [float(r["rps"]) for r in rs]
    rss = [x for x in (rss_total(r["peak_rss_mib"]) for r in rs) if x is not None]
    opr = [x for x in (opens_per_request(r) for r in rs) if x is not None]
    up = [x for x in (upstream_opens_per_request(r) for r in rs) if x is not None]
    agg[k] = {
        "rps": statistics.median(rps), "min": min(rps), "max": max(rps), "n": len(rps),
        "p50": statistics.median(float(r["p50_ms"]) for r in rs),
        "p99": statistics.median(float(r["p99_ms"]) for r in rs),
        "err": sum(errors(r) for r in rs),
        "shed": fmt(sum(shed(r) for r in rs) if any(shed_or_none(r) is not None for r in rs) else None),
        "err_note": "+" if any(mostly_read_errors(r) for r in rs) else "",
        "rss": max(rss) if rss else None,
        "rss_parts": rs[-1]["peak_rss_mib"],
        "redacted": " ".join(sorted({r["redacted"] for r in rs})),
        "opr": statistics.median(opr) if opr else None,
        "up": statistics.median(up) if up else None,
        "up_max": max(up) if up else None,
    }


def get(target, shape, conns):
    return agg.get((target, shape, conns))


def ratio(k, base):
    b = get(base, k[1], k[2])
    return agg[k]["rps"] / b["rps"] if b and b["rps"] > 0 else None


lines = []
out = lines.append
out("Side-by-side load benchmark (issue 10): tests/load/bench-side-by-side.sh")
out(f"date {meta.get('date_utc', '?')}  commit {meta.get('commit', '?')}  wall {meta.get('wall_s', '?')} s")
out(f"machine: {meta.get('machine', '?')}; {meta.get('java', '?')}; {meta.get('wrk', '?')}")
out(f"load average before {meta.get('load_before', '?')}, after {meta.get('load_after', '?')}")
out(f"settings: {meta.get('knobs', '?')}")
out(f"results: {OUT}")
out("")
nruns = len(runs)
out(f"{'target':15} {'shape':9} {'c':>4} {'req/s':>8} {'(min-max)':>15} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} "
    f"{'shed':>6} {'RSS MiB':>8} {'x direct':>8} {'x sq_icap':>9}  redacted")
for k in keys:
    a = agg[k]
    rng = f"({a['min']:.0f}-{a['max']:.0f})" if a["n"] > 1 else ""
    rss = fmt(a["rss"]) + ("*" if "+" in a["rss_parts"] else "")
    err = str(a["err"]) + a["err_note"]
    out(f"{k[0]:15} {k[1]:9} {k[2]:>4} {a['rps']:>8.0f} {rng:>15} {a['p50']:>8.2f} {a['p99']:>8.2f} {err:>7} "
        f"{a['shed']:>6} {rss:>8} {fmt(ratio(k, 'direct'), '{:.3f}'):>8} {fmt(ratio(k, 'squid_icap'), '{:.2f}'):>9}  {a['redacted']}")
out("")
out(f"req/s: {'median of ' + str(nruns) + ' runs, (min-max)' if nruns > 1 else 'one run'}; p50/p99: latency "
    f"percentiles from wrk (median over runs);")
out("errors: non-2xx answers + socket errors (connect/read/write/timeout), summed over runs; + = nearly all are read")
out("  errors, which wrk counts when the proxy closes the connection after each answer (no client keep-alive):")
out("  those requests completed; shed answers are not among them;")
out("shed: 503 middleware_admission_exhausted answers, counted by the supervisor (supervisor_requests_shed_total) over")
out("  the window, summed over runs: its middleware work bound (32 requests evaluating + 64 queued, OpenShell's) sheds")
out("  at once what exceeds it, by design. wrk does not wait for Retry-After, so a connection beyond the bound sends")
out("  its next request at once and is shed again: at 128 connections the count grows with how fast a 503 comes back,")
out("  and req/s counts those answers too (req/s served = req/s x (requests - shed) / requests); - = not counted (not a")
out("  supervisor target, or results written before the harness counted it);")
out("RSS MiB: peak resident memory of the proxy during the measurement, sampled every 0.5 s, including its direct")
out("  children (supervisor_ext: supervisor + Privacy Guard; * = sum of processes: squid_icap = squid + c-icap;")
out("  direct = nginx); max over runs;")
out("x direct / x sq_icap: median req/s divided by direct's / squid_icap's for the same shape and connections;")
out("redacted: did the upstream (nginx /echo) get the harness's 2 KiB body without its e-mail addresses and sk- key")
out("  (cl = the length it got; 2048 = unchanged). supervisor: no:cl=2033 expected, openshell/regex redacts the sk-")
out("  key (a secret format) and has no e-mail pattern; supervisor_ext: no:cl=2048 expected, that body carries its")
out("  address outside the chat messages, which is all Privacy Guard reads (the check under c. sends a chat message).")

# ---------------------------------------------------------------- extras
out("")
out("Extra measurements")
knobs = dict(re.findall(r"(\w+)=('[^']*'|\S+)", meta.get("knobs", "")))
nomw_heap = int(knobs["NOMW_HEAP_MIB"]) if "NOMW_HEAP_MIB" in knobs else None


def rss_run(subdir, target):
    """(row, RSS MiB series) of run_anchors.sh's POST_1MiB row in OUT/subdir, or (None, [])."""
    path = os.path.join(OUT, subdir, "results.csv")
    rows_ = [r for r in csv.DictReader(open(path, encoding="utf-8"))] if os.path.exists(path) else []
    row = next((r for r in rows_ if r["target"] == target and r["shape"] == "POST_1MiB"), None)
    if row is None:
        return None, []
    series = []
    samples = os.path.join(OUT, subdir, "raw", f"{target}-POST_1MiB-c{row['conns']}.rss")
    if os.path.exists(samples):
        for line in open(samples, encoding="utf-8"):
            if line.split():
                series.append(sum(int(c) for c in line.split()) / 1024)
    return row, series


rss_runs = {"supervisor": rss_run("rss", "supervisor"), "supervisor_nomw": rss_run("rss-nomw", "supervisor_nomw")}
out("a. concurrent 1 MiB uploads (POST_1MiB), RSS of the supervisor sampled every 0.5 s:")
for t, (r, series) in rss_runs.items():
    label = "supervisor" if t == "supervisor" else f"supervisor_nomw (-Xmx{nomw_heap or '?'}m)"
    if r is None:
        out(f"   {label:25}: no result (see {OUT}/{'rss' if t == 'supervisor' else 'rss-nomw'}.log)")
        continue
    first = series[0] if series else None
    peak = max(series) if series else rss_total(r["peak_rss_mib"])
    out(f"   {label:25} c={r['conns']}: {r['requests']} requests, {float(r['rps']):.0f} req/s, p50 "
        f"{float(r['p50_ms']):.0f} ms, p99 {float(r['p99_ms']):.0f} ms, errors {failed(r)}, RSS {fmt(first)} MiB "
        f"at the start, peak {fmt(peak)} MiB")

startups = []
sp = os.path.join(OUT, "startup.txt")
if os.path.exists(sp):
    startups = [float(x) for x in open(sp, encoding="utf-8").read().split()]
if startups:
    out(f"b. start-up, launch of bin/supervisor run to 'supervisor listening on' ({len(startups)} starts, the "
        f"first one creates the CA): median {statistics.median(startups):.2f} s, range "
        f"{min(startups):.2f}-{max(startups):.2f} s ({', '.join(f'{s:.2f}' for s in startups)})")
else:
    out(f"b. start-up: no result (see {OUT}/startup)")

ext_cases = {}
ep = os.path.join(OUT, "ext-latency.txt")
if os.path.exists(ep):
    for line in open(ep, encoding="utf-8"):
        m = re.match(r"^(\S.*?)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", line)
        if m:
            ext_cases[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
if ext_cases:
    out("c. one external stage (Privacy Guard, loopback gRPC), sequential calls "
        "(tests/bench/external-stage-latency.sh):")
    for name, (n, p50, p99) in ext_cases.items():
        out(f"   {name:36} n={n:<5} p50 {p50:.2f} ms  p99 {p99:.2f} ms")
else:
    out(f"c. external stage latency: no result (see {ep})")
for c in sorted({k[2] for k in keys if k[1] == "POST_2KiB"}):
    e, n = get("supervisor_ext", "POST_2KiB", c), get("supervisor_nomw", "POST_2KiB", c)
    if e and n:
        out(f"   under load, POST 2 KiB c={c}: p50 supervisor_ext - supervisor_nomw = {e['p50'] - n['p50']:+.2f} ms "
            f"({e['p50']:.2f} - {n['p50']:.2f}; includes queueing behind the stage on 2 cores)")
chk = read_kv(os.path.join(OUT, "ext-check", "result.txt"))
out(f"   supervisor_ext check: upstream saw Privacy Guard's redaction of a chat message: {chk.get('redacted', '?')}; "
    f"Privacy Guard stopped with the supervisor: {chk.get('privacy_guard_stopped', '?')}")
out(f"   after the run: processes of the image left: {meta.get('stray_image_pids', '?')}; harness ports still "
    f"listening: {meta.get('busy_harness_ports', '?')}")

# ---------------------------------------------------------------- targets
out("")
out("Targets (issue 10)")


def target(ok, text):
    out(f"  [{'n/a   ' if ok is None else 'MET   ' if ok else 'MISSED'}] {text}")


def rps_target(label, t, shape, c, base, factor):
    s, b = get(t, shape, c), get(base, shape, c)
    if not s or not b:
        target(None, f"{label}: no {t if not s else base} row for {shape} c={c}")
        return
    need = factor * b["rps"]
    target(s["rps"] >= need, f"{label}: {s['rps']:.0f} req/s vs {factor:g} x {base} {b['rps']:.0f} = {need:.0f} "
                             f"(ratio {s['rps'] / b['rps']:.2f})")


rps_target("POST 2 KiB c=32, regex >= 3 x squid_icap", "supervisor", "POST_2KiB", 32, "squid_icap", 3)
rps_target("POST 2 KiB c=32, regex >= squid", "supervisor", "POST_2KiB", 32, "squid", 1)
s, b = get("supervisor", "POST_2KiB", 32), get("squid_icap", "POST_2KiB", 32)
if s and b:
    target(s["p99"] < b["p50"], f"POST 2 KiB c=32, regex p99 < squid_icap p50: {s['p99']:.2f} ms vs {b['p50']:.2f} ms")
else:
    target(None, "POST 2 KiB c=32, regex p99 < squid_icap p50: rows missing")
rps_target("GET c=32, no middleware >= 1.5 x squid", "supervisor_nomw", "GET", 32, "squid", 1.5)
big = sorted({k[2] for k in keys if k[1] == "POST_1MiB"})
if big:
    rps_target(f"POST 1 MiB c={big[0]}, regex >= 10 x squid_icap", "supervisor", "POST_1MiB", big[0], "squid_icap", 10)
else:
    target(None, "POST 1 MiB, regex >= 10 x squid_icap: no POST_1MiB rows")
p50s = [(name, v[1]) for name, v in ext_cases.items() if name.startswith("2 KiB chat")]
if p50s:
    worst = max(p50s, key=lambda x: x[1])
    target(worst[1] <= 1.0, f"one external stage adds <= 1 ms p50 at 2 KiB: {worst[1]:.2f} ms (worst 2 KiB chat case, "
                            f"'{worst[0]}')")
else:
    target(None, "one external stage adds <= 1 ms p50 at 2 KiB: no measurement")
r, series = rss_runs["supervisor"]
if r is not None:
    peak = max(series) if series else rss_total(r["peak_rss_mib"])
    target(peak < GIB_MIB and failed(r) == 0,
           f"peak RSS < 1 GiB, {r['conns']} concurrent 1 MiB uploads through the regex chain: {peak:.0f} MiB, "
           f"errors {failed(r)}")
else:
    target(None, "peak RSS < 1 GiB with concurrent 1 MiB uploads: no measurement")
r, _ = rss_runs["supervisor_nomw"]
if r is not None and nomw_heap is not None:
    conns, done = int(r["conns"]), int(r["requests"])
    target(failed(r) == 0 and done >= conns and nomw_heap < conns,
           f"no body buffered without a chain: supervisor_nomw completed {done} uploads (>= {conns} needed), errors "
           f"{failed(r)}, with a {nomw_heap} MiB max heap < {conns} concurrent 1 MiB bodies")
else:
    target(None, "no body buffered without a chain: no measurement")
if startups:
    med = statistics.median(startups)
    target(med < 1.5, f"start to listening line < 1.5 s: median {med:.2f} s of {len(startups)}")
else:
    target(None, "start to listening line < 1.5 s: no measurement")

# ---------------------------------------------------------------- targets of issue 23 (and its noise check)
MB, MIB = 1_000_000, 1024 * 1024
out("")
out("Targets (issue 23)")
aot = meta.get("image_aot_bytes", "?")
out(f"  image {meta.get('image', '?')}")
if aot.isdigit():
    out(f"  AOT cache lib/supervisor.aot: present ({int(aot) / MIB:.0f} MiB)")
elif aot == "absent":
    out("  AOT cache lib/supervisor.aot: ABSENT: this image was built without it (-Dimage.aot=false, or a JDK < 25),")
    out("  which is not the shipped form (./dev.sh build); start-up and the first seconds of load are slower than shipped")
else:
    out("  AOT cache lib/supervisor.aot: unknown")
before, after = meta.get("image_stamp_before"), meta.get("image_stamp_after")
if before is not None and after is not None and before != after:
    out("  WARNING: the image changed during the run: the figures measured after the change are not of this image;")
    out("  run again on an image nobody rebuilds meanwhile (IMAGE=a copy). lib/modules and lib/supervisor.aot, size@mtime:")
    out(f"  '{before.strip()}' at the start, '{after.strip()}' at the end")
warm = knobs.get("WARMUP")
if warm is None:
    out("  warm-up of the supervisor targets: unknown (no WARMUP in meta.txt)")
else:
    out(f"  warm-up: {warm} s of unrecorded load on each supervisor target before its measured windows")
    peer = knobs.get("PEER_WARMUP", "1")
    out("  (" + ("the harness's 1 s of POST 2 KiB on 8 connections" if warm in ("0", "1") else
                 "half GET, half POST 2 KiB, 32 connections") + f"); direct and the peers: {peer} s")

# noise check: direct GET at the start and the end of each run
noise = read_kv(os.path.join(OUT, "noise.txt"))
noisy, unknown = [], []
out(f"  noise check (direct GET, 32 connections, {knobs.get('NOISE_DURATION', '?')} s, at the start and end of each "
    f"run; NOISY = moved more than 10 %):")
for i in range(1, nruns + 1):
    a, b = noise.get(f"run{i}-start", ""), noise.get(f"run{i}-end", "")
    if a.isdigit() and b.isdigit() and int(a) > 0:
        change = (int(b) - int(a)) / int(a)
        flag = "NOISY" if abs(change) > 0.10 else "steady"
        if flag == "NOISY":
            noisy.append(i)
        out(f"    run {i}: start {int(a)} req/s, end {int(b)} req/s, {change * 100:+.1f} %  {flag}")
    else:
        unknown.append(i)
        out(f"    run {i}: start {a or '-'}, end {b or '-'} req/s: no figure (see {OUT}/noise)")
summary = (f"noisy runs: {', '.join(map(str, noisy))} of {nruns}" if noisy else
           f"noisy runs: none of {nruns}" if len(unknown) < nruns else "noise not checked")
if unknown and len(unknown) < nruns:
    summary += f"; not checked: {', '.join(map(str, unknown))}"
if nruns > 1:
    summary += f"; the table is the median of the {nruns} runs, noisy ones included"
elif noisy:
    summary += "; this single run's figures are suspect: run again, or RUNS=3"
out(f"    {summary}")
out("")


def p99_target(label, t, shape, c, base):
    s_, b_ = get(t, shape, c), get(base, shape, c)
    if not s_ or not b_:
        target(None, f"{label}: no {t if not s_ else base} row for {shape} c={c}")
        return
    ratio_ = f"ratio {s_['p99'] / b_['p99']:.2f}" if b_["p99"] > 0 else "ratio -"
    target(s_["p99"] <= b_["p99"], f"{label}: {s_['p99']:.2f} ms vs {base} {b_['p99']:.2f} ms ({ratio_})")


rps_target("POST 2 KiB c=32, regex >= 1.5 x squid", "supervisor", "POST_2KiB", 32, "squid", 1.5)
rps_target("POST 2 KiB c=32, regex >= 3 x squid_icap", "supervisor", "POST_2KiB", 32, "squid_icap", 3)
rps_target("POST 2 KiB c=32, regex >= 0.20 x direct", "supervisor", "POST_2KiB", 32, "direct", 0.20)
p99_target("POST 2 KiB c=32, regex p99 <= squid p99", "supervisor", "POST_2KiB", 32, "squid")
rps_target("GET c=32, no middleware >= 2 x squid", "supervisor_nomw", "GET", 32, "squid", 2)
rps_target("GET c=32, chain selected >= 0.85 x no middleware", "supervisor", "GET", 32, "supervisor_nomw", 0.85)

# upstream TCP opens per request, every supervisor row of the table
sup_rows = [(k, agg[k]) for k in keys if k[0].startswith("supervisor")]
counted = [(k, a) for k, a in sup_rows if a["up"] is not None]
if counted:
    worst_k, worst = max(counted, key=lambda x: x[1]["up"])
    over = [f"{k[0]} {k[1]} c={k[2]} {a['up']:.2f}" for k, a in counted if a["up"] > 0.05]
    runs_note = f", max over runs {worst['up_max']:.2f}" if worst["n"] > 1 else ""
    target(len(over) == 0 and len(counted) == len(sup_rows),
           f"upstream TCP opens per request <= 0.05 on every supervisor row ({len(counted)} of {len(sup_rows)} rows "
           f"counted): worst {worst_k[0]} {worst_k[1]} c={worst_k[2]} {worst['up']:.2f} (conn/r "
           f"{worst['opr']:.2f}){runs_note}")
    if over:
        packed = [""]
        for item in over:   # whole entries per line
            if packed[-1] and len(packed[-1]) + len(item) > 90:
                packed.append("")
            packed[-1] += ("; " if packed[-1] else "") + item
        for i, line in enumerate(packed):
            out(f"           {'above 0.05: ' if i == 0 else '            '}{line}")
    uncounted = [f"{k[0]} {k[1]} c={k[2]}" for k, a in sup_rows if a["up"] is None]
    if uncounted:
        out(f"           no count (no request completed): {'; '.join(uncounted)}")
    out("           (the harness's conn/r counts TCP connect()s on the whole host per completed request; the figure")
    out("           here is conn/r - c / requests, without wrk's own c connections of the window; median over runs)")
else:
    target(None, "upstream TCP opens per request <= 0.05: no supervisor row with a count")

if big:
    rps_target(f"POST 1 MiB c={big[0]}, regex >= 10 x squid_icap", "supervisor", "POST_1MiB", big[0], "squid_icap", 10)
else:
    target(None, "POST 1 MiB, regex >= 10 x squid_icap: no POST_1MiB rows")

for c in (32, 128):
    a = get("supervisor", "POST_2KiB", c)
    if a and a["rss"] is not None:
        target(a["rss"] <= 256, f"peak RSS under POST 2 KiB c={c}, regex <= 256 MiB: {a['rss']:.0f} MiB "
                                f"(ratio {a['rss'] / 256:.2f}; max over runs)")
    else:
        target(None, f"peak RSS under POST 2 KiB c={c}, regex <= 256 MiB: no supervisor POST_2KiB c={c} row")
r, series = rss_runs["supervisor"]
if r is not None:
    peak = max(series) if series else rss_total(r["peak_rss_mib"])
    done = int(r["requests"] or 0)
    target(peak is not None and peak < GIB_MIB and failed(r) == 0 and done > 0,
           f"peak RSS < 1 GiB and 0 errors, {r['conns']} concurrent 1 MiB uploads, regex: "
           f"{fmt(peak)} MiB (ratio {fmt(peak / GIB_MIB if peak is not None else None, '{:.2f}')}), "
           f"errors {failed(r)}, {done} completed")
else:
    target(None, "peak RSS < 1 GiB with concurrent 1 MiB uploads: no measurement")

size = [int(meta[k]) for k in ("image_bytes", "image_disk_bytes") if meta.get(k, "").isdigit()]
if size:
    big_ = max(size)
    parts = []
    if meta.get("image_modules_bytes", "").isdigit():
        parts.append(f"lib/modules {int(meta['image_modules_bytes']) / MB:.1f} MB")
    if aot.isdigit():
        parts.append(f"lib/supervisor.aot {int(aot) / MB:.1f} MB")
    target(big_ <= 120 * MB,
           f"image <= 120 MB: {big_ / MB:.1f} MB = {big_ / MIB:.1f} MiB (ratio {big_ / (120 * MB):.2f}; du, the "
           f"larger of apparent size and disk usage" + (f"; {', '.join(parts)}" if parts else "") + ")")
else:
    target(None, "image <= 120 MB: no size measured")
if startups:
    med = statistics.median(startups)
    target(med < 1.0, f"start-up, launch to 'supervisor listening on' < 1 s: median {med:.2f} s of {len(startups)} "
                      f"(ratio {med:.2f})")
else:
    target(None, "start-up < 1 s: no measurement")


# ---------------------------------------------------------------- targets of issue 41
out("")
out("Targets (issue 41)")
rps_target("GET c=32, no middleware >= 2 x squid", "supervisor_nomw", "GET", 32, "squid", 2)
rps_target("POST 2 KiB c=32, regex >= 2 x squid", "supervisor", "POST_2KiB", 32, "squid", 2)
rps_target("POST 2 KiB c=32, regex >= 0.25 x direct", "supervisor", "POST_2KiB", 32, "direct", 0.25)


def spread(t, shape, c):
    """Run-to-run spread of a row, (max - min) / median in points, or None with fewer than 2 runs."""
    a = get(t, shape, c)
    return 100 * (a["max"] - a["min"]) / a["rps"] if a and a["n"] > 1 and a["rps"] > 0 else None


for t, shape in (("supervisor_nomw", "GET"), ("supervisor", "POST_2KiB")):
    mine, theirs = spread(t, shape, 32), spread("squid", shape, 32)
    if mine is None or theirs is None:
        target(None, f"{t} {shape} c=32 run-to-run spread <= squid's + 10 points: needs RUNS >= 2 and squid rows")
    else:
        target(mine <= theirs + 10, f"{t} {shape} c=32 run-to-run spread <= squid's + 10 points: {mine:.0f} vs "
                                    f"{theirs:.0f} points")
p99_target("POST 2 KiB c=32, regex p99 <= squid p99 (warm)", "supervisor", "POST_2KiB", 32, "squid")
cold_s, cold_b = get("supervisor", "POST_2KiB_cold", 32), get("squid", "POST_2KiB_cold", 32)
if cold_s and cold_b and cold_b["p99"] > 0:
    target(cold_s["p99"] <= 2 * cold_b["p99"],
           f"POST 2 KiB c=32, regex p99 in the first {knobs.get('COLD_DURATION', '?')} s after start <= 2 x squid's: "
           f"{cold_s['p99']:.2f} ms vs squid {cold_b['p99']:.2f} ms (ratio {cold_s['p99'] / cold_b['p99']:.2f}); "
           f"req/s {cold_s['rps']:.0f} vs {cold_b['rps']:.0f}")
else:
    target(None, "POST 2 KiB p99 in the first seconds after start <= 2 x squid's: no POST_2KiB_cold rows")
if big:
    rps_target(f"POST 1 MiB c={big[0]}, regex >= 10 x squid_icap", "supervisor", "POST_1MiB", big[0], "squid_icap", 10)
if startups:
    med = statistics.median(startups)
    target(med < 1.0, f"ready (launch to 'supervisor listening on') < 1 s: median {med:.2f} s of {len(startups)}")
out("  (RSS and image size: the issue 23 lines above; victims under attack, shedding and the soak: other tools)")

print("\n".join(lines))
