#!/usr/bin/env python3
"""Replays the shares' warmup rule on the intervals a full run recorded.

For each sustained share window without errors, the warmup's intervals
(warmup_corrected_ms, after the ramp) and then the window's own (their
corrected P50) are read as one series; a rule decides where the warmup
would have ended (at least 2 s, at most the cap), and the 10 intervals
after that are the window it would have measured: flat when its first
second's corrected P50 (the geometric mean of two half-second intervals)
is at most twice its last second's. A window the replay moves later runs
past what was recorded and is judged on the intervals there are ("partial").
This is a model of the rule, not a measurement: the full run decides.

  results/full-2026-12-06-j/replay.py results/full-2026-12-06-i1 results/full-2026-12-06-i2 results/full-2026-12-06-j
"""
import glob
import json
import math
import sys


def rule_before(ms, n, pct, slack):
    """The rule until 2026-12-06: the last within pct or slack of the calmest, not falling."""
    k = len(ms) - 1
    calm = min(ms)
    falling = k > 0 and ms[k] < ms[k - 1] * (1 - pct / 100) and ms[k - 1] - ms[k] > slack
    return len(ms) >= n and ms[k] <= max(calm * (1 + pct / 100), calm + slack) and not falling


def rule_now(ms, n, pct, slack):
    """load.calmRun: each of the last n within pct or slack above the calmest."""
    band = max(min(ms) * (1 + pct / 100), min(ms) + slack)
    return len(ms) >= n and all(v <= band for v in ms[-n:])


def gm(a, b):
    return math.exp((math.log(max(a, 1e-3)) + math.log(max(b, 1e-3))) / 2)


def replay(files, rule, n, pct, slack, cap_s, floor_s=2, interval_s=0.5):
    flat = judged = partial = capped = 0
    extra = []
    for f in files:
        s = json.load(open(f))
        if s.get("labels", {}).get("phase") != "share" or s.get("sustain", {}).get("verdict") != "sustained" or s.get("error_rate", 0) > 0.0001:
            continue
        warm = s.get("warmup_corrected_ms") or []
        series = warm + [iv.get("corrected_p50_ms") for iv in s["intervals"][:10]]
        ramp = int(round(s.get("ramp_s", 1) / interval_s))
        end = len(series) - 1
        for i in range(ramp, len(series)):
            t = (i + 1) * interval_s
            if t >= cap_s:
                end, capped = i, capped + 1
                break
            if t >= floor_s and rule(series[ramp:i + 1], n, pct, slack):
                end = i
                break
        extra.append((end - (len(warm) - 1)) * interval_s)
        window = series[end + 1:end + 11]
        if len(window) < 10:
            partial += 1
        if len(window) < 4:
            continue
        judged += 1
        flat += gm(window[0], window[1]) <= 2 * gm(window[-2], window[-1])
    extra.sort()
    return (f"flat {flat} of {judged} ({100 * flat / max(judged, 1):.0f}%), partial {partial}, at the cap {capped}, "
            f"warmup against the run's: median {extra[len(extra) // 2]:+.1f} s, sum {sum(extra):+.0f} s")


for run in sys.argv[1:]:
    files = glob.glob(f"{run}/*/*-share*.json")
    print(run)
    print("  the rule before (2 intervals, 50% or 1 ms, cap 10 s): ", replay(files, rule_before, 2, 50, 1, 10))
    print("  the rule now (4 intervals, 50% or 0.2 ms, cap 10 s):  ", replay(files, rule_now, 4, 50, 0.2, 10))
    print("  the rule now, cap 15 s (what the full profile runs):  ", replay(files, rule_now, 4, 50, 0.2, 15))
