#!/usr/bin/env python3
"""Summary of tests/load/cold-timeline.sh: timeline.py OUT LABEL=IMAGE... (the labels as given to the script).

Per run: requests and req/s over the window, p99 (ms), the slowest first request of a connection (ms), requests
completed by 1 s and 2 s into the window, the p99 of the requests started after 1 s and after 2 s, the request
carriers' CPU per request (us; the virtual threads' carrier pool), the share of the requests at or above the
p99 that started in the first second and in the first two, and the JIT compiler threads' CPU (s) by the end
of the window, ready (launch to the listening line, ms) and the load average. Then the median of each label, and its
timeline in 250 ms steps (median over runs of each step's request count and p99). With CLIENT=wrk: req/s and p99
from wrk's report instead."""
import glob, os, re, statistics, sys


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))] if values else 0


def meta(d):
    m = dict(kv.split('=', 1) for kv in open(os.path.join(d, 'meta.txt')).read().split())
    return {k: float(v) for k, v in m.items()}


def threads(d):
    out = {}
    for line in open(os.path.join(d, 'threads.txt')):
        k, v = line.rstrip('\n').rsplit('=', 1)
        out[k.strip()] = int(v)
    return out


def run_row(d):
    m, t = meta(d), threads(d)
    hz = m.get('ticks_per_s', 100)
    carriers = sum(v for k, v in t.items() if k.startswith('ForkJoinPool')) / hz
    jit = sum(v for k, v in t.items() if 'CompilerThre' in k) / hz
    row = {'ready_ms': m['ready_ms'], 'load': m['load'], 'jit_s': round(jit, 2)}
    lat = os.path.join(d, 'lat.txt')
    if os.path.exists(lat):
        begin, rows, first = None, [], {}
        for line in open(lat):
            if line.startswith('# begin_us'):
                begin = int(line.split()[2])
            elif not line.startswith('#'):
                s, l, c = (int(x) for x in line.split())
                rows.append((s - begin, l))
                if c not in first or s < first[c][0]:
                    first[c] = (s, l)
        n = len(rows)
        lats = [l for _, l in rows]
        row.update({
            'requests': n,
            'p99_ms': round(pct(lats, 99) / 1000, 1),
            'first_max_ms': round(max(l for _, l in first.values()) / 1000) if first else 0,
            'done_1s': sum(1 for s, l in rows if s + l <= 1e6),
            'done_2s': sum(1 for s, l in rows if s + l <= 2e6),
            'p99_after_1s': round(pct([l for s, l in rows if s >= 1e6], 99) / 1000, 1),
            'p99_after_2s': round(pct([l for s, l in rows if s >= 2e6], 99) / 1000, 1),
            'carrier_us_per_req': round(carriers * 1e6 / n) if n else 0,
        })
        slow = [s for s, l in rows if l >= pct(lats, 99)]
        row['slow_in_1s'] = round(sum(1 for s in slow if s < 1e6) / len(slow), 2) if slow else 0
        row['slow_in_2s'] = round(sum(1 for s in slow if s < 2e6) / len(slow), 2) if slow else 0
        row['steps'] = {}
        for s, l in rows:
            row['steps'].setdefault(int(s // 250000), []).append(l)
    wrk = os.path.join(d, 'wrk.txt')
    if os.path.exists(wrk):
        txt = open(wrk).read()
        rps = re.search(r'Requests/sec:\s+([\d.]+)', txt)
        p99 = re.search(r'^\s+99%\s+([\d.]+)(us|ms|s)\s*$', txt, re.M)
        row['wrk_rps'] = round(float(rps.group(1))) if rps else 0
        if p99:
            row['wrk_p99_ms'] = round(float(p99.group(1)) * {'us': 0.001, 'ms': 1, 's': 1000}[p99.group(2)], 1)
    return row


def main():
    out, labels = sys.argv[1], [s.split('=', 1)[0] for s in sys.argv[2:]]
    keys = ['requests', 'p99_ms', 'first_max_ms', 'done_1s', 'done_2s', 'p99_after_1s', 'p99_after_2s',
            'slow_in_1s', 'slow_in_2s',
            'carrier_us_per_req', 'jit_s', 'wrk_rps', 'wrk_p99_ms', 'ready_ms', 'load']
    for label in labels:
        dirs = sorted(glob.glob(os.path.join(out, label + '-*')), key=lambda d: int(d.rsplit('-', 1)[1]))
        rows = [run_row(d) for d in dirs]
        shown = [k for k in keys if any(k in r for r in rows)]
        print(f"{label}: " + ' '.join(shown))
        for d, r in zip(dirs, rows):
            print(f"  {os.path.basename(d):8s} " + ' '.join(str(r.get(k, '-')) for k in shown))
        print("  median   " + ' '.join(str(statistics.median(r[k] for r in rows if k in r)) for k in shown))
        if rows and 'steps' in rows[0]:
            steps = sorted({k for r in rows for k in r['steps']})
            line = []
            for k in steps:
                counts = [len(r['steps'].get(k, [])) for r in rows]
                p99s = [pct(r['steps'][k], 99) / 1000 for r in rows if k in r['steps']]
                line.append(f"{k * 0.25:.2f}s:{statistics.median(counts):.0f}/{statistics.median(p99s):.0f}")
            print("  timeline (start of step: median requests / median p99 ms): " + ' '.join(line))


if __name__ == '__main__':
    main()
