#!/usr/bin/env bash
# openings.sh RUN_DIR: issue 47's figures of a full run, as the READMEs of
# results/full-2026-12-06-j and -k quote them: the sustain check
# (SUSTAINED.txt), the flat openings (the first measured second's corrected
# P50 at most twice the last's), how often seconds 1-4 are above twice the
# last, and the windows grouped by where each product's closing sampler and
# the host sampler tick (PHASE.txt; results/sampler-probe/phase.jq).
#   results/full-2026-12-06-j/openings.sh results/full-2026-12-06-k
# AGGREGATE names a built aggregate (default: go run ./cmd/aggregate).
set -o errexit -o nounset -o pipefail
run="${1:?usage: openings.sh RUN_DIR}"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
read -r -a aggregate <<<"${AGGREGATE:-go run ./cmd/aggregate}"
"${aggregate[@]}" sustained "$run" --check-report "$run/COMPARISON.md" >"$run/SUSTAINED.txt"
tail -n 3 "$run/SUSTAINED.txt"
awk '$(NF-1)=="/" && $0 !~ /not_sustained/ && / sustained / {gsub(",","",$(NF-2)); gsub(",","",$NF);
  n++; if ($(NF-2) <= 2*$NF) f++} END {print "flat openings: " f " of " n}' "$run/SUSTAINED.txt"
jq -s -c -f results/full-2026-12-06-i2/seconds.jq "$run"/*/*-share*.json
# The first record's time of a sampler file (its times drop trailing zeros:
# pad the fraction before comparing).
first='map(.t) | min_by(sub("Z$";"") | split(".") | .[0] + "." + ((.[1] // "0") + "000")[:3])'
{
	echo "== phase by product (t0: the product's last sampler file's first record)"
	for dir in "$run"/*/; do
		p="$(basename "$dir")"
		f="$(find "$dir" -maxdepth 1 -name 'samples-*.jsonl' | sort | tail -n 1)"
		if [[ -z "$f" ]] || ! compgen -G "$dir*-share*.json" >/dev/null; then
			continue
		fi
		t0="$(jq -s -r "$first" "$f")"
		echo "-- $p ($(basename "$f"), t0 $t0)"
		jq -s -r --arg t0 "$t0" -f results/sampler-probe/phase.jq "$dir"*-share*.json
	done
	h="$(find "$run" -maxdepth 1 -name 'host-samples-*.jsonl' | sort | head -n 1)"
	t0="$(jq -s -r "[.[] | select(.probe_us != null)] | $first" "$h")"
	echo "-- all products, host sampler's tick (t0 $t0)"
	jq -s -r --arg t0 "$t0" -f results/sampler-probe/phase.jq "$run"/*/*-share*.json
} >"$run/PHASE.txt"
echo "phases: $run/PHASE.txt"
