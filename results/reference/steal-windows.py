#!/usr/bin/env python3
"""The hypervisor's steal in each measured window of the reference pair (REPRODUCE.md).

Run from the repository root: python3 results/reference/steal-windows.py
AGG names a built aggregate (default: go run ./cmd/aggregate). A window's steal is the mean
of the host's steal_pct records (the sampler's) between the step's start and end.
"""
import datetime, glob, json, os, shlex, statistics, subprocess

RUNS = ['results/reference', 'results/reference-rerun']
PRODUCTS = ['refop', 'hydra', 'keycloak']
AGG = shlex.split(os.environ.get('AGG', 'go run ./cmd/aggregate'))


def ts(s):
    return datetime.datetime.fromisoformat(s.replace('Z', '+00:00')).timestamp()


def host_steal(run, product):
    return [(ts(r['t']), r['steal_pct'])
            for f in glob.glob(f'{run}/{product}/samples-*.jsonl')
            for r in map(json.loads, open(f))
            if r.get('source') == 'host' and r.get('steal_pct') is not None]


def window_steal(samples, step):
    a, b = ts(step['start']), ts(step['end'])
    v = [x for t, x in samples if a <= t <= b]
    return statistics.mean(v) if v else None


samples = {(r, p): host_steal(r, p) for r in RUNS for p in PRODUCTS}

print('# every measured window')
for r in RUNS:
    for p in PRODUCTS:
        ws = sorted(w for f in glob.glob(f'{r}/{p}/*-c*.json') if not f.endswith('.knee.json')
                    for w in [window_steal(samples[r, p], json.load(open(f)))] if w is not None)
        n = len(ws)
        print('%s %s windows %d mean steal per window: median %.1f p90 %.1f max %.1f; windows >5%%: %d'
              % (r.split('/')[-1], p, n, ws[n // 2], ws[int(n * 0.9)], ws[-1], sum(w > 5 for w in ws)))

print('# the steady windows, qps@steal, run 1 | run 2')
cells = {}
for r in RUNS:
    for line in subprocess.run(AGG + ['steady', r], capture_output=True, text=True, check=True).stdout.splitlines():
        c = json.loads(line)
        if c.get('product') not in PRODUCTS or 'c' not in c:
            continue
        p, sc, conn = c['product'], c['scenario'], c['c']
        files = sorted(glob.glob(f'{r}/{p}/{sc}-c{conn}.json') + glob.glob(f'{r}/{p}/{sc}-c{conn}-r*.json'))
        ws = []
        for f in files:
            s = json.load(open(f))
            w = window_steal(samples[r, p], s)
            ws.append('%.0f@%s' % (s['qps'], '?' if w is None else '%.0f%%' % w))
        cells.setdefault((p, sc), []).append('c=%d %s' % (conn, ' '.join(ws)))
for (p, sc), v in sorted(cells.items()):
    print(p, sc, ' | '.join(v))
