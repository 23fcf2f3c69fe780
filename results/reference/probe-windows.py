#!/usr/bin/env python3
"""probe-windows.py RUN_DIR...: how well the host probe explains the spread
of a level's windows (the analysis behind REPRODUCE.md's "Host speed";
python3 results/reference/probe-windows.py results/reference results/reference-rerun).

A window's host probe is the median probe_us of the sampler's host records
inside it (as the report takes it). For every level measured in >= 2 windows
with a probe, each window's qps and host speed (the level's median probe /
the window's probe) are set against the level's median; then their
correlation over all windows, and for the levels of >= 3 windows the median
spread of qps (the report's: the largest distance from the median) raw and at
one host speed (each window's qps times its probe over the level's median
probe, as the report's "at one host speed"). Last, per product, each level's
round-1 window against the median of its rounds 2 and 3 (measured 15-40
minutes later, the product up all the while), raw and at one host speed: did
the warmup rule leave round 1 short of what the product reaches warm? With two
runs, also how each cell agrees between them when its figure is its candidate
levels' windows pooled, or its best level, instead of one steady level."""
import glob, json, math, os, re, statistics as st, sys
from datetime import datetime


def ts(s):
    s = s.rstrip("Z")
    base, _, frac = s.partition(".")
    return datetime.fromisoformat(base + "+00:00").timestamp() + float("0." + (frac or "0"))


def probes(run):
    out = []
    for f in glob.glob(f"{run}/*/samples-*.jsonl"):
        for line in open(f):
            d = json.loads(line)
            if d.get("source") == "host" and d.get("probe_us") is not None:
                out.append((ts(d["t"]), d["probe_us"]))
    return sorted(out)


def levels(run):
    pr = probes(run)
    out = {}
    for f in glob.glob(f"{run}/*/*-c*.json"):
        m = re.match(r"(.*)-c(\d+)(?:-r(\d+))?\.json$", os.path.basename(f))
        if not m:
            continue
        d = json.load(open(f))
        if d.get("status") != "complete" or d.get("qps", 0) <= 0:
            continue
        a, b = ts(d["start"]), ts(d["end"])
        inside = [p for t, p in pr if a <= t <= b]
        if not inside:
            continue
        key = (f.split("/")[-2], m[1], int(m[2]))
        out.setdefault(key, []).append((d["start"], d["qps"], st.median(inside)))
    return {k: sorted(v) for k, v in out.items() if len(v) >= 2}


def corr(xs, ys):
    if len(xs) < 2:
        return float("nan")
    mx, my = st.mean(xs), st.mean(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy) if sx and sy else float("nan")


def rounds(run, prod, sc, c, ws):
    """The round of each of ws (sorted by start): from the step file's name."""
    out = []
    for start, _, _ in ws:
        for f in glob.glob(f"{run}/{prod}/{sc}-c{c}*.json"):
            m = re.match(r".*-c\d+(?:-r(\d+))?\.json$", f)
            if m and json.load(open(f)).get("start") == start:
                out.append(int(m[1] or 1))
                break
        else:
            out.append(0)
    return out


def spread(v):
    m = st.median(v)
    return 100 * max(max(v) / m - 1, 1 - min(v) / m)


for run in sys.argv[1:]:
    lv = levels(run)
    dq, ds = [], []
    print(f"== {run}: {len(lv)} levels of >= 2 windows with a probe")
    for (prod, sc, c), ws in sorted(lv.items()):
        mq = st.median(w[1] for w in ws)
        mp = st.median(w[2] for w in ws)
        row = []
        for _, q, p in ws:
            dq.append(100 * (q / mq - 1))
            ds.append(100 * (mp / p - 1))
            row.append(f"{q:9.1f} ({dq[-1]:+5.1f}%) host {ds[-1]:+5.1f}% ({p:.0f} us)")
        print(f"{prod:9} {sc:25} c={c:<3} " + " | ".join(row))
    mq, ms = st.mean(dq), st.mean(ds)
    slope = sum((s - ms) * (q - mq) for q, s in zip(dq, ds)) / sum((s - ms) ** 2 for s in ds)
    print(f"windows: {len(dq)}; correlation of qps and host speed (each against its level's median): {corr(dq, ds):.2f}; "
          f"slope {slope:.2f} (1: qps moves one to one with the host speed)")
    big = [(q, s) for q, s in zip(dq, ds) if abs(q) > 5]
    print(f"windows more than 5% off their level's median qps: {len(big)}; of those, host speed off the same way by > 2%: "
          f"{sum(1 for q, s in big if s * q > 0 and abs(s) > 2)}")
    spreads = []
    for ws in lv.values():
        if len(ws) < 3:
            continue
        q = [w[1] for w in ws]
        p = [w[2] for w in ws]
        mp = st.median(p)
        spreads.append((spread(q), spread([a * b / mp for a, b in zip(q, p)])))
    print(f"levels of >= 3 windows: {len(spreads)}; median qps spread {st.median(s[0] for s in spreads):.1f}% raw, "
          f"{st.median(s[1] for s in spreads):.1f}% at one host speed; over 10%: {sum(s[0] > 10 for s in spreads)} raw, "
          f"{sum(s[1] > 10 for s in spreads)} at one host speed")
    for prod in ("refop", "hydra", "keycloak"):
        raw, adj, rows = [], [], []
        for (p, sc, c), ws in sorted(lv.items()):
            if p != prod or len(ws) < 3:
                continue
            by = {r: w for w, r in zip(ws, rounds(run, p, sc, c, ws))}
            if 1 not in by or not any(r in by for r in (2, 3)):
                continue
            later = [by[r] for r in (2, 3) if r in by]
            r1 = by[1]
            raw.append(100 * (r1[1] / st.median(w[1] for w in later) - 1))
            adj.append(100 * (r1[1] * r1[2] / st.median(w[1] * w[2] for w in later) - 1))
            rows.append(f"{sc} c={c} {adj[-1]:+.1f}%")
        if raw:
            print(f"{prod}: round 1 against rounds 2-3 over {len(raw)} levels: median {st.median(raw):+.1f}% raw, "
                  f"{st.median(adj):+.1f}% at one host speed; more than 10% lower at one host speed: "
                  + (", ".join(r for r, a in zip(rows, adj) if a < -10) or "none"))


def pooled(lv):
    """Per product and scenario: the median qps of the windows of every level
    of >= 3 windows whose median is within 10% of the best such level's
    (the candidates a steady level is chosen from, pooled), and the best
    level's median."""
    cells = {}
    for (p, sc, c), ws in lv.items():
        if len(ws) >= 3:
            cells.setdefault((p, sc), []).append(ws)
    out = {}
    for k, levels in cells.items():
        meds = [st.median(w[1] for w in ws) for ws in levels]
        best = max(meds)
        near = [w[1] for ws, m in zip(levels, meds) if m >= 0.9 * best for w in ws]
        out[k] = (st.median(near), best)
    return out


if len(sys.argv) == 3:
    # Would a cell's figure that does not hang on one steady level agree
    # better between the two runs? (It does not: the level is not the lever.)
    a, b = (pooled(levels(r)) for r in sys.argv[1:])
    for i, what in ((0, "the candidate levels' windows pooled"), (1, "the best level's median")):
        d = [100 * (b[k][i] / a[k][i] - 1) for k in a if k in b]
        print(f"{sys.argv[1]} -> {sys.argv[2]}, each cell as {what}: {sum(abs(x) <= 5 for x in d)} of {len(d)} "
              f"within ±5%, median |Δ| {st.median(abs(x) for x in d):.1f}%")
