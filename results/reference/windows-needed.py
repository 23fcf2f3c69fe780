#!/usr/bin/env python3
"""windows-needed.py RUN1 RUN2: how many windows a cell's capacity needs for a
95% interval of at most ±5% (issue 35), what they cost, and what more windows
cannot remove (the shift between runs).

    python3 results/reference/windows-needed.py results/reference results/reference-rerun

Stdlib only; reads the step files, the sampler's host probes and phases.jsonl
of each run, the plateau of each cell from the run's COMPARISON.md (its
"Plateau: levels (windows)" column: the levels whose windows the capacity
pools), and the invocation pilot's windows.tsv.

- Scatter of a cell's plateau windows: CV (sd/mean) and a robust one
  (1.4826 × the median absolute deviation of ln qps from its median); raw and
  at one host speed (qps · (probe/ref)^-slope, slope fitted per product and run
  on the within-level deviations of ln qps on ln probe, as the report does but
  without its [-1.5, 0] acceptance, so every cell has a figure).
- Windows needed: "normal" is n = (1.96 · 1.2533 · σ / 5%)², σ the sd of ln
  qps (the median's efficiency, 1.2533σ/√n); "resampled" draws n windows from
  the cell's own windows (ln deviations, smoothed with a Gaussian kernel so a
  few windows do not act as a few discrete values) and takes benchmath's
  order-statistic interval (exact binomial; benchmath uses a normal
  approximation above 30, which picks the same or a neighbouring order
  statistic), the farther end in percent of the median as the report does:
  the smallest n whose mean half-width is ≤ 5%, and (P80) the smallest n
  with the half-width ≤ 5% in 80% of draws. Cells of fewer than 3 windows use
  the product's pooled scatter in that run (marked *).
- Cost: a window's measured seconds (duration) and its wall seconds in the
  rounds after the first (the phase's seconds over its windows: warmup, the
  window, the gaps), against the measured seconds the run had.
- Between runs: per cell Δ of the capacity (median of the plateau windows)
  against the model half-widths h = 1.96·1.2533·σ/√n of each side; the
  between-run component is what Δ has beyond h₁² + h₂²."""
import bisect, functools, glob, json, math, os, random, re, statistics as st, sys
from datetime import datetime

Z, EFF, TARGET, B = 1.959964, math.sqrt(math.pi / 2), 0.05, 300
PILOT = "results/invocations/client_credentials-c8/windows.tsv"


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


def probe_in(pr, a, b):
    i = bisect.bisect_left(pr, (a, -1))
    vs = [p for t, p in pr[i:bisect.bisect_right(pr, (b, float("inf")))]]
    return st.median(vs) if vs else 0


def plateaus(run):
    """{(product, scenario): [connections]} from COMPARISON.md's main table."""
    out = {}
    for line in open(f"{run}/COMPARISON.md"):
        cols = [c.strip() for c in line.split("|")]
        if len(cols) > 6 and re.match(r"S\d\w* \w+$", cols[1]) and re.match(r"c=\d+ \(\d+\)", cols[5]):
            out[(cols[2], cols[1].split()[1])] = [(int(c), int(n)) for c, n in re.findall(r"c=(\d+) \((\d+)\)", cols[5])]
    return out


def windows(run):
    """Every ladder window: {(product, scenario, c): [step dict + probe]}, in time order."""
    pr, out = probes(run), {}
    for f in glob.glob(f"{run}/*/*-c*.json"):
        m = re.match(r"(.*)-c(\d+)(?:-r\d+)?\.json$", os.path.basename(f))
        if not m:
            continue
        d = json.load(open(f))
        d["probe"] = probe_in(pr, ts(d["start"]), ts(d["end"]))
        out.setdefault((f.split("/")[-2], m[1], int(m[2])), []).append(d)
    return {k: sorted(v, key=lambda d: d["start"]) for k, v in out.items()}


def qualifies(d):
    return (d["status"] == "complete" and d["requests"] > 0 and d["error_rate"] < 1e-4
            and sum(d.get("connect_errors", {}).values()) == 0 and not d.get("driver", {}).get("limited"))


def slopes(lv):
    """Per product: slope of ln qps on ln probe, within levels (the report's HostSlope, unclamped)."""
    acc = {}
    for (p, _, _), ws in lv.items():
        if len(ws) < 2 or not all(qualifies(w) and w["probe"] > 0 for w in ws):
            continue
        mx, my = st.mean(math.log(w["probe"]) for w in ws), st.mean(math.log(w["qps"]) for w in ws)
        a = acc.setdefault(p, [0.0, 0.0, 0])
        for w in ws:
            dx, dy = math.log(w["probe"]) - mx, math.log(w["qps"]) - my
            a[0], a[1], a[2] = a[0] + dx * dy, a[1] + dx * dx, a[2] + 1
    return {p: (a[0] / a[1], a[2]) for p, a in acc.items() if a[1] > 0}


def wall_per_window(run):
    """Per product: median wall seconds a window of the rounds after the first took."""
    starts = {}
    for f in glob.glob(f"{run}/*/*-c*-r*.json"):
        d = json.load(open(f))
        starts.setdefault((d["product"], d["scenario"]), []).append(ts(d["started_at"]))
    per = {}
    for line in open(f"{run}/phases.jsonl"):
        ph = json.loads(line)
        m = re.match(r"(\w+) ladder (\w+) \((?:precision )?round (\d+)/", ph["name"])
        if ph["kind"] != "ladder" or not m or int(m[3]) < 2:
            continue
        a, b = ts(ph["start"]), ts(ph["end"])
        k = sum(a <= t <= b for t in starts.get((m[1], m[2]), []))
        if k:
            per.setdefault(m[1], []).append(ph["seconds"] / k)
    return {p: st.median(v) for p, v in per.items()}


def measured(run):
    """Wall seconds of the run and the seconds of every measured window (ladder and shares)."""
    ph = [json.loads(l) for l in open(f"{run}/phases.jsonl")]
    wall = ts(ph[-1]["end"]) - ts(ph[0]["start"])
    win = 0.0
    for f in glob.glob(f"{run}/*/*.json"):
        if re.search(r"-(c\d+(-r\d+)?|share\d+)\.json$", f):
            d = json.load(open(f))
            win += ts(d["end"]) - ts(d["start"])
    return wall, win


@functools.lru_cache(None)
def median_orders(n, conf=0.95):
    """benchmath / go-moremath QuantileCI(n, 0.5, conf): 1-based order statistics (exact binomial)."""
    pmf = lambda k: math.comb(n, k) * 0.5 ** n if 0 <= k <= n else 0.0
    l = r = math.ceil((n + 1) * 0.5) - 1
    r += 1
    acc = pmf(l)
    while acc < conf and (pmf(l - 1) > 0 or pmf(r) > 0):
        if pmf(l - 1) >= pmf(r):
            acc, l = acc + pmf(l - 1), l - 1
        else:
            acc, r = acc + pmf(r), r + 1
    return max(l, 0), min(r, n + 1)


def half_width(vs):
    """The report's HalfPct of benchmath's interval of vs (fraction; inf without one)."""
    lo, hi = median_orders(len(vs))
    if lo < 1 or hi > len(vs):
        return math.inf
    s, m = sorted(vs), st.median(vs)
    return max(s[hi - 1] / m - 1, 1 - s[lo - 1] / m)


def far_end(sigma, n, seed=1):
    """Mean half-width (the farther end) of benchmath's interval of n windows of a lognormal of σ."""
    rng = random.Random(seed)
    return st.mean(half_width([math.exp(rng.gauss(0, sigma)) for _ in range(n)]) for _ in range(4 * B))


def sd_ln(vs):
    return st.stdev([math.log(v) for v in vs]) if len(vs) > 1 else float("nan")


def rmad(vs):
    lm = st.median(math.log(v) for v in vs)
    return 1.4826 * st.median(abs(math.log(v) - lm) for v in vs) if len(vs) > 2 else float("nan")


def n_normal(sigma):
    return max(6, math.ceil((Z * EFF * sigma / TARGET) ** 2))


def n_resampled(devs, sigma, seed):
    """Smallest n with mean half-width <= 5%, and with P(half-width <= 5%) >= 0.8 (smoothed bootstrap)."""
    hk = 0.9 * sigma * len(devs) ** -0.2
    shrink = 1 / math.sqrt(1 + hk * hk / sigma ** 2)

    def stats(n):
        rng = random.Random(seed * 1000 + n)
        hs = [half_width([math.exp(shrink * (rng.choice(devs) + rng.gauss(0, hk))) for _ in range(n)]) for _ in range(B)]
        return st.mean(hs), sum(h <= TARGET for h in hs) / B

    def smallest(ok):
        lo, hi = 5, 6
        while not ok(stats(hi)):
            lo, hi = hi, hi * 2
            if hi > 2000:
                return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(stats(mid)) else (mid, hi)
        return hi
    return smallest(lambda s: s[0] <= TARGET), smallest(lambda s: s[1] >= 0.8)


def cells(run):
    lv, plat = windows(run), plateaus(run)
    sl = slopes(lv)
    out = {}
    for (p, sc), levels in plat.items():
        ws = [w for c, n in levels for w in lv[(p, sc, c)]]
        if len(ws) != sum(n for _, n in levels):
            print(f"warning: {run} {p} {sc}: {len(ws)} step files, COMPARISON.md says {levels}", file=sys.stderr)
        q = [w["qps"] for w in ws]
        pr = [w["probe"] for w in ws]
        b = sl.get(p, (0, 0))[0]
        adj = [x * (y / st.median(pr)) ** -b for x, y in zip(q, pr)] if all(pr) else None
        sec = [st.stdev(x) / st.mean(x) for w in ws
               if len(x := [i["qps"] for i in w.get("intervals", []) if i.get("length_s") == 1]) > 2 and st.mean(x) > 0]
        out[(p, sc)] = dict(levels=levels, q=q, probe=pr, adj=adj, slope=b, sec=sec, dur=st.median(w["duration_s"] for w in ws))
    return out, sl


def pooled_devs(cs, key):
    """Per product: ln deviations from the cell mean (scaled by √(n/(n-1))) of its cells of >= 3 windows."""
    out = {}
    for (p, _), c in cs.items():
        vs = c[key]
        if vs and len(vs) >= 3:
            lm = st.mean(math.log(v) for v in vs)
            k = math.sqrt(len(vs) / (len(vs) - 1))
            out.setdefault(p, []).extend(k * (math.log(v) - lm) for v in vs)
    return out


def need(c, key, pool, seed):
    """(σ, borrowed?, n normal, n resampled, n resampled P80) of cell c's windows c[key]."""
    vs = c[key]
    if not vs:
        return None
    if len(vs) >= 3:
        lm = st.mean(math.log(v) for v in vs)
        devs, sigma, star = [math.log(v) - lm for v in vs], sd_ln(vs), ""
    else:
        devs, star = pool[c["product"]], "*"
        sigma = math.sqrt(sum(d * d for d in devs) / len(devs))
    return (sigma, star, n_normal(sigma)) + n_resampled(devs, sigma, seed)


def pct(x, d=1):
    return "–" if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))) else f"{100 * x:.{d}f}%"


def med(xs):
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return st.median(xs) if xs else float("nan")


def pilot():
    """One-way random-effects ANOVA of ln qps over the pilot's invocations, per product."""
    rows = [l.rstrip("\n").split("\t") for l in open(PILOT)][1:]
    out = {}
    for p in sorted({r[0] for r in rows}):
        g = {}
        for r in rows:
            if r[0] == p:
                g.setdefault(r[1], []).append(math.log(float(r[3])))
        k, m = len(g), len(next(iter(g.values())))
        grand = st.mean(x for v in g.values() for x in v)
        msw = sum((x - st.mean(v)) ** 2 for v in g.values() for x in v) / (k * (m - 1))
        msb = m * sum((st.mean(v) - grand) ** 2 for v in g.values()) / (k - 1)
        out[p] = (math.sqrt(msw), math.sqrt(max(0, (msb - msw) / m)), k, m)
    return out


def main():
    runs = sys.argv[1:3] if len(sys.argv) >= 3 else ["results/reference", "results/reference-rerun"]
    print(f"`python3 results/reference/windows-needed.py {' '.join(runs)}`\n")
    data = []
    for ri, run in enumerate(runs):
        cs, sl = cells(run)
        for (p, sc), c in cs.items():
            c["product"] = p
        pools = {k: pooled_devs(cs, k) for k in ("q", "adj")}
        for i, ((p, sc), c) in enumerate(sorted(cs.items())):
            c["raw_need"] = need(c, "q", pools["q"], 1000 * ri + i)
            c["adj_need"] = need(c, "adj", pools["adj"], 1000 * ri + i + 500)
        data.append((run, cs, sl, wall_per_window(run), measured(run)))

    print("## Windows per cell for a capacity interval of ±5%\n")
    print("n: the plateau's windows (the capacity pools them); CV and rMAD: the windows' scatter (sd/mean; 1.4826·MAD of ln qps);")
    print("adj: at one host speed (the product's fitted slope in that run, in the header below). 95% now: the half-width of")
    print("benchmath's interval of these windows (– under 6). Needed: normal / resampled (resampled, 80% of draws). * borrows the")
    print("product's pooled scatter (cell under 3 windows). s/window: the product's wall seconds a window (rounds 2+).")
    print("Caveat on adj: the slope is fitted on these same windows (in sample, so adj flatters), and the report accepts only")
    print("slopes in [-1.5, 0]: run 1's Hydra and Keycloak slopes are about 0 (adj ≈ raw), run 2's Keycloak is -2.12.\n")
    for run, cs, sl, wpw, _ in data:
        print(f"**{run}**: host slopes " + ", ".join(f"{p} {b:.2f} ({n} windows)" for p, (b, n) in sorted(sl.items())) + "\n")
        print("| product | scenario | plateau (windows) | n | CV | rMAD | CV adj | rMAD adj | 95% now | needed raw | needed adj | s/window |")
        print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        for (p, sc), c in sorted(cs.items()):
            nd = lambda x: "–" if not x else f"{x[2]}{x[1]} / {x[3] or '>2000'}{x[1]} ({x[4] or '>2000'})"
            cv = lambda vs: st.stdev(vs) / st.mean(vs) if vs and len(vs) > 1 else float("nan")
            adj = c["adj"]
            print(f"| {p} | {sc} | {', '.join(f'c={a} ({b})' for a, b in c['levels'])} | {len(c['q'])} | {pct(cv(c['q']))} | "
                  f"{pct(rmad(c['q']) if len(c['q']) > 2 else None)} | {pct(cv(adj) if adj else None)} | "
                  f"{pct(rmad(adj) if adj and len(adj) > 2 else None)} | {pct(half_width(c['q']))} | "
                  f"{nd(c['raw_need'])} | {nd(c['adj_need'])} | {wpw.get(p, float('nan')):.1f} |")
        print()

    print("## Time: what the windows needed cost, against what the hour had\n")
    print("| run | wall | measured windows (share) | in 10 s windows | plateau windows had | needed raw: normal / resampled / P80 | needed adj | measured s needed raw (normal / resampled / P80) | wall s needed raw (resampled) | half-width the hour affords (median σ, measured s / 20 cells) |")
    print("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    summary = {}
    for run, cs, sl, wpw, (wall, win) in data:
        raw = [c["raw_need"] for c in cs.values() if c["raw_need"]]
        adj = [c["adj_need"] for c in cs.values() if c["adj_need"]]
        dur = st.median(c["dur"] for c in cs.values())
        tot = lambda xs, i: sum((x[i] or 2000) for x in xs)
        wall_need = sum((c["raw_need"][3] or 2000) * wpw[c["product"]] for c in cs.values() if c["raw_need"])
        per_cell = win / dur / len(cs)
        afford = far_end(med([x[0] for x in raw]), int(per_cell))
        summary[run] = dict(raw=[med([x[i] for x in raw]) for i in (2, 3, 4)], adj=[med([x[i] for x in adj]) for i in (2, 3, 4)],
                            sigma=(med([x[0] for x in raw]), med([x[0] for x in adj])), win=win, wall=wall,
                            need=(tot(raw, 2) * dur, tot(raw, 3) * dur, tot(raw, 4) * dur), need_adj=tot(adj, 3) * dur,
                            wall_need=wall_need, per_cell=per_cell, afford=afford, had=sum(len(c["q"]) for c in cs.values()))
        s = summary[run]
        print(f"| {run} | {wall / 60:.1f} min | {win:.0f} s ({100 * win / wall:.1f}%) | {win / dur:.0f} | {s['had']} | "
              f"{s['raw'][0]:.0f} / {s['raw'][1]:.0f} / {s['raw'][2]:.0f} a cell | {s['adj'][0]:.0f} / {s['adj'][1]:.0f} / {s['adj'][2]:.0f} a cell | "
              f"{s['need'][0]:.0f} / {s['need'][1]:.0f} / {s['need'][2]:.0f} s ({s['need'][1] / win:.1f}× the hour's) | "
              f"{s['wall_need'] / 60:.0f} min | ±{100 * afford:.1f}% ({per_cell:.1f} windows a cell) |")
    print()
    print("The half-width the hour affords is the farther end of benchmath's interval, simulated from a lognormal of the median σ.")
    print("The normal column is the symmetric half-width 1.96·1.2533·σ/√n; the report's ±5% is the farther end of benchmath's")
    rng = random.Random(2)
    ref_n = n_resampled([rng.gauss(0, 0.1) for _ in range(5000)], 0.1, 2)[0]
    print(f"order-statistic interval, which is wider: from a normal with σ 10% it needs {ref_n} windows where the formula says "
          f"{n_normal(0.1)}, so the resampled column is the one that matches the target.\n")
    for run, cs, sl, wpw, (wall, win) in data:
        s = summary[run]
        sec = med([x for c in cs.values() for x in c["sec"]])
        cv = med([st.stdev(c["q"]) / st.mean(c["q"]) for c in cs.values() if len(c["q"]) > 2])
        over = st.median(wpw.values()) - 10
        best = {d: 3600 / (d + over) / len(cs) for d in (10, 5)}
        print(f"- {run}: the 1 s intervals inside a window scatter {pct(sec)} (CV), {pct(sec / math.sqrt(10))} over a 10 s window, "
              f"against a window-to-window CV of {pct(cv)}: the windows' scatter is the machine's over minutes, not counting noise, "
              f"so a 5 s window would scatter about as much as a 10 s one. A window of the later rounds costs "
              f"{over:.1f} s beyond its 10 s. Best case, the whole 60 min in plateau windows at that cost: "
              f"{best[10]:.0f} windows a cell of 10 s, {best[5]:.0f} of 5 s (needed: {s['raw'][1]:.0f} raw, {s['adj'][1]:.0f} adj, resampled).")
    print()

    print("## What more windows do not remove: the shift between runs\n")
    c1, c2 = data[0][1], data[1][1]
    print("Δ: run 2's capacity (median of the plateau's windows) over run 1's. h: the model half-width 1.96·1.2533·σ/√n of each side")
    print("(σ the cell's sd of ln qps, or the product's pooled one, *). adj: both runs at one reference probe (the median of both runs'")
    print("plateau windows), each with its own run's slope. Covered: |ln Δ| ≤ √(h₁²+h₂²).\n")
    print("| product | scenario | n₁ / n₂ | Δ raw | h₁ | h₂ | √(h₁²+h₂²) | covered | Δ adj |")
    print("|---|---|--:|--:|--:|--:|--:|---|--:|")
    ref = st.median([x for c in (*c1.values(), *c2.values()) for x in c["probe"] if x])
    d_raw, excess, byprod, covered, d_adj = [], [], {}, 0, []
    keys = sorted(set(c1) & set(c2))
    for k in keys:
        a, b = c1[k], c2[k]
        d = math.log(st.median(b["q"]) / st.median(a["q"]))
        h = [Z * EFF * x["raw_need"][0] / math.sqrt(len(x["q"])) for x in (a, b)]
        comb = math.hypot(*h)
        covered += abs(d) <= comb
        d_raw.append(d)
        excess.append(d * d - (h[0] ** 2 + h[1] ** 2) / Z ** 2)
        byprod.setdefault(k[0], []).append(d)
        at = lambda c: st.median(x * (y / ref) ** -c["slope"] for x, y in zip(c["q"], c["probe"])) if all(c["probe"]) else None
        da = math.log(at(b) / at(a)) if at(a) and at(b) else None
        if da is not None:
            d_adj.append(da)
        star = lambda x: x["raw_need"][1]
        print(f"| {k[0]} | {k[1]} | {len(a['q'])} / {len(b['q'])} | {pct(math.expm1(d))} | {pct(h[0])}{star(a)} | {pct(h[1])}{star(b)} | "
              f"{pct(comb)} | {'yes' if abs(d) <= comb else '**no**'} | {pct(math.expm1(da) if da is not None else None)} |")
    n = len(d_raw)
    var_d = st.mean(x * x for x in d_raw)
    sb_mean = math.sqrt(max(0, st.mean(excess)) / 2)
    within = [x * x - e for e, x in zip(excess, d_raw)]  # v₁ + v₂ of each cell
    sb_med = math.sqrt(max(0, st.median(x * x for x in d_raw) / 0.4549 - st.median(within)) / 2)  # 0.4549: median of χ²₁
    print()
    print(f"{covered} of {n} cells have Δ within √(h₁²+h₂²). Mean square of ln Δ {var_d:.4f} (rms {pct(math.sqrt(var_d))}); "
          f"the within-run part of it (mean (h₁²+h₂²)/1.96²) {st.mean((x * x - e) for e, x in zip(excess, d_raw)):.4f}; "
          f"the rest is a between-run component of σ_b {pct(sb_mean)} a run (robust, from medians: {pct(sb_med)}), "
          f"which no number of windows in a run takes out: with infinitely many windows, |Δ| would still have a median of "
          f"0.674·√2·σ_b = {pct(0.6745 * math.sqrt(2) * sb_mean)} and lie within ±5% in "
          f"{pct(math.erf(math.log(1.05) / (2 * sb_mean)) if sb_mean else 1, 0)} of cells.\n")
    hh = TARGET * math.sqrt(2)  # both runs' intervals at ±5%
    sd = math.sqrt(2 * sb_mean ** 2 + 2 * (TARGET / Z) ** 2)
    print(f"With both runs at ±5% intervals (√(h₁²+h₂²) = {pct(hh)}) and σ_b {pct(sb_mean)}, Δ would fall inside in "
          f"{pct(math.erf(hh / sd / math.sqrt(2)), 0)} of cells (target 90%), within ±5% in "
          f"{pct(math.erf(math.log(1.05) / sd / math.sqrt(2)), 0)} (target 80%). The targets themselves need, even with "
          f"infinitely many windows, σ_b ≤ {pct(math.log(1.05) / 1.2816 / math.sqrt(2))} (±5% in 80% of cells) and "
          f"≤ {pct(math.log(1.04) / 0.6745 / math.sqrt(2))} (median |Δ| ≤ 4%).\n")
    print("Per product, the median Δ over its cells (a shift common to the product's cells is a run-level effect) and its σ_b:",
          ", ".join(f"{p} {pct(math.expm1(st.median(v)))} ({len(v)} cells, Δ from {pct(math.expm1(min(v)))} to {pct(math.expm1(max(v)))}; "
                    f"σ_b {pct(math.sqrt(max(0, st.mean(e for (q, _), e in zip(keys, excess) if q == p)) / 2))})"
                    for p, v in sorted(byprod.items())) + ".")
    print(f"Raw: {sum(abs(math.expm1(x)) <= 0.05 for x in d_raw)} of {n} within ±5%, median |Δ| {pct(med([abs(math.expm1(x)) for x in d_raw]))}; "
          f"adj: {sum(abs(math.expm1(x)) <= 0.05 for x in d_adj)} of {len(d_adj)}, median |Δ| {pct(med([abs(math.expm1(x)) for x in d_adj]))}.\n")

    print(f"Invocation pilot ({PILOT}; one-way random-effects ANOVA of ln qps, as PILOT.md):\n")
    print("| product | invocations × windows | within σ_w | between σ_b | |Δ| floor of two runs (0.674·√2·σ_b) | windows for ±5% at σ_w (normal) |")
    print("|---|--:|--:|--:|--:|--:|")
    for p, (sw, sb, k, m) in pilot().items():
        print(f"| {p} | {k} × {m} | {pct(sw)} | {pct(sb)} | {pct(0.6745 * math.sqrt(2) * sb)} | {n_normal(sw)} |")
    print()

    print("## Summary\n")
    for run in runs:
        s = summary[run]
        print(f"- {run}: median σ of a cell's windows {pct(s['sigma'][0])} raw, {pct(s['sigma'][1])} adj; windows a cell for ±5%: "
              f"median {s['raw'][0]:.0f} (normal) / {s['raw'][1]:.0f} (resampled) / {s['raw'][2]:.0f} (P80) raw, "
              f"{s['adj'][0]:.0f} / {s['adj'][1]:.0f} / {s['adj'][2]:.0f} adj. All cells at the resampled n: "
              f"{s['need'][1]:.0f} measured s raw, {s['need_adj']:.0f} adj, against {s['win']:.0f} measured s in the run "
              f"({s['need'][1] / s['win']:.1f}× and {s['need_adj'] / s['win']:.1f}×); at today's cost per window "
              f"{s['wall_need'] / 60:.0f} min of wall time raw. The run's measured seconds spread over its cells: "
              f"{s['per_cell']:.1f} windows a cell, ±{100 * s['afford']:.1f}% at the median σ.")
    print(f"- Between runs: σ_b ≈ {pct(sb_mean)} a run (from the pair), a floor of median |Δ| ≈ {pct(0.6745 * math.sqrt(2) * sb_mean)} "
          f"that more windows do not lower; {covered} of {n} cells have Δ within the combined within-run half-widths.")


if __name__ == "__main__":
    main()
