#!/usr/bin/env bash
# false-alarms.sh: how often `aggregate compare` calls an unchanged target
# changed. Runs 2N quick runs of the generic oidc adapter back to back (its
# default configuration: the reference OP, started by the adapter), each
# with --repeats R, compares run 2i-1 with run 2i (i = 1..N) and counts the
# cells flagged significant. Nothing changed between the runs, so every flag
# is a false alarm: at alpha 0.05 about 5% of the tests may be.
#
#   scripts/false-alarms.sh [--pairs N] [--repeats R] [--out DIR]
#
#   --pairs N    pairs of runs (default 5)
#   --repeats R  windows per ladder step (default 5)
#   --out DIR    where the runs, the comparisons and summary.txt go
#                (default results/false-alarms/<date>); the run directories
#                go under DIR/runs (not committed), the comparisons
#                (pair-<i>.tsv, pair-<i>.md) and summary.txt beside them
#
# Environment: IDPBENCH_SCENARIOS (default "discovery client_credentials
# introspect userinfo"), IDPBENCH_LADDER (default "8"), IDPBENCH_OIDC_CONFIG
# (default: the reference OP), the ladder's variables. A pair whose runs
# fail is reported and counted as failed, never as a comparison.
# Exit codes: 0 done (whatever the count), 1 a run failed, 2 a bad argument.
#
# Rules and records: docs/design.md#the-scripts; README.md (How often it cries wolf).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=false-alarms

PAIRS=5 REPEATS=5 OUT=""
while (($# > 0)); do
	case "$1" in
	--pairs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_error "--pairs wants a positive number"; PAIRS="$2" && shift ;;
	--repeats) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_error "--repeats wants a positive number"; REPEATS="$2" && shift ;;
	--out) OUT="${2:-}" && shift ;;
	-h | --help) script_help && exit 0 ;;
	*) usage_error "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
OUT="${OUT:-$IDPBENCH_ROOT/results/false-alarms/$(date -u +%Y%m%d-%H%M)}"
mkdir -p "$OUT/runs"
export IDPBENCH_RESULTS="$OUT/runs"
export IDPBENCH_SCENARIOS="${IDPBENCH_SCENARIOS:-discovery client_credentials introspect userinfo}"
export IDPBENCH_LADDER="${IDPBENCH_LADDER:-8}"
export IDPBENCH_GCJITTER_S="${IDPBENCH_GCJITTER_S:-5}"

build_tools
bad=0
for ((i = 1; i <= 2 * PAIRS; i++)); do
	step "$i" $((2 * PAIRS)) "run $i: scenarios $IDPBENCH_SCENARIOS, ladder $IDPBENCH_LADDER, $REPEATS windows each"
	if [[ -s "$OUT/runs/run-$i/oidc/meta.json" ]]; then
		log "run $i: finished before (its meta.json exists), kept"
		continue
	fi
	IDPBENCH_NO_BUILD=1 "$IDPBENCH_ROOT/scripts/run-comparison.sh" --quick --only oidc --repeats "$REPEATS" \
		--run-id "run-$i" >"$OUT/runs/run-$i.log" 2>&1 || { log "run $i failed (log: $OUT/runs/run-$i.log)"; bad=1; }
done

aggregate="$(tool aggregate)"
{
	printf 'false alarms of aggregate compare: %d pairs of back-to-back runs of one unchanged target\n' "$PAIRS"
	printf 'target: %s; scenarios: %s; ladder: %s; windows per step: %s; quick profile\n' \
		"${IDPBENCH_OIDC_CONFIG:-examples/oidc/refop.env}" "$IDPBENCH_SCENARIOS" "$IDPBENCH_LADDER" "$REPEATS"
	printf 'tool: %s\n\n' "$("$aggregate" --version)"
} >"$OUT/summary.txt"
for ((i = 1; i <= PAIRS; i++)); do
	a="$OUT/runs/run-$((2 * i - 1))" b="$OUT/runs/run-$((2 * i))"
	for unit in window interval; do
		rc=0
		"$aggregate" compare --all-steps --unit "$unit" --format tsv "$a" "$b" >"$OUT/pair-$i.$unit.tsv" 2>>"$OUT/summary.txt" || rc=$?
		((rc == 0)) || { printf 'pair %d (%s): compare failed (exit %d)\n' "$i" "$unit" "$rc" >>"$OUT/summary.txt"; bad=1; }
	done
	"$aggregate" compare --all-steps "$a" "$b" >"$OUT/pair-$i.md" 2>/dev/null || true
done
# Count, over every pair and per sample unit: compared rows, and per metric
# the significant ones.
for unit in window interval; do
	printf '\nsamples: one per %s\n' "$unit"
	awk -F '\t' '
		BEGIN { metric[1] = "qps"; metric[2] = "p50"; metric[3] = "p99" }
		FNR == 1 { for (c = 1; c <= NF; c++) col[$c] = c; next }
		$col["status"] == "compared" {
			rows++
			for (m = 1; m <= 3; m++) if ($col[metric[m] "_significant"] == "true") sig[metric[m]]++
			if ($col["qps_significant"] == "true") printf "  flagged qps: %s %s c=%s %s%% (p=%s)\n", FILENAME, $col["scenario"], $col["connections"], $col["qps_delta_pct"], $col["qps_p"]
		}
		END {
			printf "  compared cells: %d\n", rows
			for (m = 1; m <= 3; m++) printf "  significant %s: %d of %d (%.0f%%)\n", metric[m], sig[metric[m]], rows, rows ? 100 * sig[metric[m]] / rows : 0
		}' "$OUT"/pair-*."$unit".tsv
done >>"$OUT/summary.txt"
cat "$OUT/summary.txt"
exit "$bad"
