#!/usr/bin/env python3
"""Capacity interval widths of one or more runs, raw and at one host speed.

    python3 results/reference/capacity-widths.py results/reference results/reference-rerun

Reads each run's main table as JSON (`go run ./cmd/aggregate steady DIR`, its
"capacity" field) and prints, per run and figure, how many cells have a 95%
interval, the median half-width of those intervals (percent of the median,
the farther end) and their window counts. The figures of REPRODUCE.md's
"Capacity" section come from this script.
"""
import json
import subprocess
import sys


def widths(run):
    out = subprocess.run(["go", "run", "./cmd/aggregate", "steady", run],
                         capture_output=True, text=True, check=True).stdout
    cells, found = 0, {"raw": [], "adjusted": []}
    for line in out.splitlines():
        cap = json.loads(line).get("capacity")
        if not cap:
            continue
        cells += 1
        for kind, got in found.items():
            iv = cap[kind]
            if "lo" in iv and iv.get("median"):
                half = 100 * max(iv["hi"] / iv["median"] - 1, 1 - iv["lo"] / iv["median"])
                got.append((half, iv["n"]))
    return cells, found


def main():
    for run in sys.argv[1:] or ["results/reference", "results/reference-rerun"]:
        cells, found = widths(run)
        print(f"{run}: {cells} cells with a capacity")
        for kind, got in found.items():
            halves = sorted(h for h, _ in got)
            med = f"{halves[len(halves) // 2]:.1f}%" if halves else "-"
            print(f"  {kind}: {len(got)} with an interval, median half-width {med}, windows {sorted(n for _, n in got)}")


if __name__ == "__main__":
    main()
