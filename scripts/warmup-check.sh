#!/usr/bin/env bash
# warmup-check.sh: does the stability warmup rule reach the throughput a
# fixed long warmup reaches? Two runs of one product's ladder on freshly
# started products, arm "fixed" (a fixed warmup) and arm "rule" (the full
# profile's rule), then `aggregate compare fixed rule --all-steps`: each level
# side by side with its difference and p-value, and the warmups each arm spent.
#
#   scripts/warmup-check.sh [--product P] [--scenario S] [--fixed SECONDS]
#                           [--repeats R] [--out DIR]
#
#   --product P    default keycloak
#   --scenario S   default client_credentials
#   --fixed S      the fixed arm's warmup, seconds (default 60)
#   --repeats R    windows per level in each arm (default 4: the fewest a
#                  Mann-Whitney test at 0.05 can decide on)
#   --out DIR      default results/warmup-check/<product>-<scenario>; the
#                  runs go to DIR/runs (not committed), the comparison to
#                  DIR/compare.md and the warmups to DIR/warmups.tsv
#
# Environment: IDPBENCH_LADDER (default "2 8 32"), IDPBENCH_DURATION_S
# (default 10), the rule's IDPBENCH_WARMUP_S / IDPBENCH_WARMUP_MAX_S (the
# ladder's defaults). Rerunning resumes both runs.
# Exit codes: 0 done, 1 a run failed, 2 usage.
#
#   scripts/warmup-check.sh --product keycloak --fixed 60 --repeats 4
#
# Rules and records: docs/design.md#methodology-as-implemented (Warmup).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=warmup-check

PRODUCT=keycloak SCENARIO=client_credentials FIXED=60 REPEATS=4 OUT=""
while (($# > 0)); do
	case "$1" in
	--product) PRODUCT="${2:-}" && shift ;;
	--scenario) SCENARIO="${2:-}" && shift ;;
	--fixed) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { log "--fixed wants whole seconds"; exit 2; }; FIXED="$2" && shift ;;
	--repeats) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { log "--repeats wants a positive number"; exit 2; }; REPEATS="$2" && shift ;;
	--out) OUT="${2:-}" && shift ;;
	-h | --help) script_help && exit 0 ;;
	*) usage_error "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
OUT="${OUT:-$IDPBENCH_ROOT/results/warmup-check/$PRODUCT-$SCENARIO}"
mkdir -p "$OUT/runs"
export IDPBENCH_RESULTS="$OUT/runs" IDPBENCH_SCENARIOS="$SCENARIO"
export IDPBENCH_LADDER="${IDPBENCH_LADDER:-2 8 32}" IDPBENCH_FULL_LADDER=1
export IDPBENCH_GCJITTER_S="${IDPBENCH_GCJITTER_S:-5}"

build_tools
run_arm() {
	local arm="$1"
	shift
	log "arm $arm: $PRODUCT $SCENARIO, ladder $IDPBENCH_LADDER, $REPEATS windows a level ($*)"
	env "$@" IDPBENCH_NO_BUILD=1 "$IDPBENCH_ROOT/scripts/run-comparison.sh" --only "$PRODUCT" \
		--repeats "$REPEATS" --run-id "$arm" >"$OUT/runs/$arm.log" 2>&1 ||
		{ log "arm $arm failed (log: $OUT/runs/$arm.log)"; exit 1; }
}
# The fixed arm is the rule run to its cap every time (a tolerance no series
# meets, no JIT condition): the same fixed warmup, with every second's
# throughput and JIT recorded (warmup_qps, jit.warmup_pct).
run_arm fixed IDPBENCH_WARMUP_S=1 "IDPBENCH_WARMUP_MAX_S=$FIXED" IDPBENCH_WARMUP_TOLERANCE_PCT=0.01 IDPBENCH_WARMUP_JIT_MAX_PCT=0
run_arm rule

aggregate="$(tool aggregate)"
rc=0
"$aggregate" compare --all-steps "$OUT/runs/fixed/$PRODUCT" "$OUT/runs/rule/$PRODUCT" >"$OUT/compare.md" || rc=$?
((rc <= 1)) || { log "aggregate compare failed (exit $rc)"; exit 1; }
{
	printf 'arm\tstart\tconnections\trepeat\twarmup_s\twarmup_stable\tqps\tjit_window_pct\tjit_warmup_pct_by_10s\n'
	for arm in fixed rule; do
		for f in "$OUT/runs/$arm/$PRODUCT/$SCENARIO"-c*.json; do
			jq -r --arg arm "$arm" '[$arm, .start, .connections, (.labels.repeat // "1"), (.warmup_s * 10 | round / 10),
				(if $arm == "fixed" then "fixed" else .warmup_stable end), .qps, (.jit.window_pct // "N/A"),
				((.jit.warmup_pct // []) as $j | [range(0; $j | length; 10)] | map($j[.:.+10] | add / length | round) | map(tostring) | join(" "))] | @tsv' "$f"
		done
	done | sort -t$'\t' -k1,1 -k2,2
} >"$OUT/warmups.tsv"
log "comparison: $OUT/compare.md; warmups: $OUT/warmups.tsv"
cat "$OUT/compare.md"
