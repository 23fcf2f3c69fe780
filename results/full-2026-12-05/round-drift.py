#!/usr/bin/env python3
"""The figures of README.md's "Every product was slower in round 2": for each
product, every ladder level measured in both rounds, its round-1 and round-2
window's throughput and host probe (the median probe_us of the sampler's host
records inside each window), and the medians of their changes.

    python3 results/full-2026-12-05/round-drift.py results/full-2026-12-05
"""
import datetime
import glob
import json
import os
import statistics
import sys


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))


def product(d):
    host = []
    for f in glob.glob(os.path.join(d, "samples-*.jsonl")):
        for line in open(f):
            r = json.loads(line)
            if r.get("source") == "host" and r.get("probe_us"):
                host.append((ts(r["t"]), r["probe_us"]))
    levels = {}
    for f in glob.glob(os.path.join(d, "*-c*.json")):
        if ".knee." in f:
            continue
        s = json.load(open(f))
        if s.get("schema") != "idpbench.step/v1" or s.get("labels", {}).get("phase", "ladder") != "ladder":
            continue
        a, b = ts(s["start"]), ts(s["end"])
        probes = [p for t, p in host if a <= t <= b]
        levels.setdefault((s["scenario"], s["connections"]), []).append(
            (s["start"], s["qps"], statistics.median(probes) if probes else None))
    dq, dp = [], []
    for (sc, c), ws in sorted(levels.items()):
        if len(ws) < 2:
            continue
        ws.sort()
        (_, q1, p1), (_, q2, p2) = ws[0], ws[1]
        dq.append(100 * (q2 / q1 - 1))
        line = f"  {sc} c={c}: qps {q1:.1f} -> {q2:.1f} ({dq[-1]:+.0f}%)"
        if p1 and p2:
            dp.append(100 * (p2 / p1 - 1))
            line += f", probe {p1:.0f} -> {p2:.0f} us ({dp[-1]:+.1f}%)"
        print(line)
    if dq:
        print(f"  {len(dq)} levels: median qps {statistics.median(dq):+.0f}%, median probe "
              f"{statistics.median(dp) if dp else float('nan'):+.1f}%")


for p in ("refop", "hydra", "keycloak"):
    print(p)
    product(os.path.join(sys.argv[1], p))
