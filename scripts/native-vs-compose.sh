#!/usr/bin/env bash
# native-vs-compose.sh: what the container costs. One product measured
# natively and in compose mode on this machine, one run each, one after the
# other, then the two put side by side.
#
#   scripts/native-vs-compose.sh [--only P] [--repeats N] [--run-id ID]
#
#   --only P       the product (default hydra; one with a compose file:
#                  products/P/compose.yml)
#   --repeats N    rounds of every ladder, so that each steady level has N
#                  windows a side (default 5: aggregate compare tests a
#                  difference from 4)
#   --run-id ID    results in $IDPBENCH_RESULTS/ID-native, ID-compose and
#                  ID/CONTAINER-COST.md (default native-vs-compose)
#
# 1. IDPBENCH_MODE=native scripts/run-comparison.sh --quick --fresh --only P
#    --repeats N --run-id ID-native
# 2. IDPBENCH_MODE=compose, the same, --run-id ID-compose (a Docker engine
#    of its own when none answers, the Compose command and the images as
#    run-comparison.sh prepares them: official where pulled, else local
#    equivalents)
# 3. aggregate compare --footprint ID-native ID-compose into
#    ID/CONTAINER-COST.md: capacity, throughput and latency at each cell's
#    steady level with their intervals and tests (OLD native, NEW compose),
#    then the cold starts and the memory side by side, with the commands
#    that made it.
#
# The two runs are sequential (native first): a drift of the machine
# between them is in the difference. Run it on a quiet machine; each run is
# about 10 minutes for Hydra with --repeats 5 (the quick profile's 3 s
# windows), Keycloak's about twice that.
#
# Exit codes: 0 done, 1 a run or the comparison failed, 2 a bad argument,
# 130 interrupted.
#
#   scripts/native-vs-compose.sh
#   scripts/native-vs-compose.sh --only keycloak --repeats 5 --run-id nvc-keycloak
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=native-vs-compose

PRODUCT=hydra
REPEATS=5
RUN_ID=native-vs-compose
while (($#)); do
	case "$1" in
	--only | --repeats | --run-id)
		(($# >= 2)) || usage_error "$1 wants a value"
		case "$1" in
		--only) PRODUCT="$2" ;;
		--repeats) REPEATS="$2" ;;
		--run-id) RUN_ID="$2" ;;
		esac
		shift 2
		;;
	-h | --help)
		script_help
		exit 0
		;;
	*) usage_error "unknown argument: $1" ;;
	esac
done
[[ "$PRODUCT" =~ ^[a-z0-9]+$ ]] || usage_error "--only $PRODUCT: want one product name, e.g. hydra"
[[ -f "$IDPBENCH_ROOT/products/$PRODUCT/compose.yml" ]] ||
	usage_error "--only $PRODUCT: no compose file (products/$PRODUCT/compose.yml), so no compose mode to compare with"
[[ "$REPEATS" =~ ^[1-9][0-9]*$ ]] || usage_error "--repeats $REPEATS: want a whole number of rounds, e.g. 5"
[[ "$RUN_ID" =~ ^[A-Za-z0-9._-]+$ ]] || usage_error "--run-id $RUN_ID: want letters, digits, '.', '_' or '-'"

RESULTS="${IDPBENCH_RESULTS:-$IDPBENCH_ROOT/results}"
build_tools
export IDPBENCH_NO_BUILD=1
start=$SECONDS
commands=()
for mode in native compose; do
	step "$([[ $mode == native ]] && echo 1 || echo 2)" 3 "$PRODUCT in $mode mode, $REPEATS rounds"
	cmd=(scripts/run-comparison.sh --quick --fresh --only "$PRODUCT" --repeats "$REPEATS" --run-id "$RUN_ID-$mode")
	commands+=("IDPBENCH_MODE=$mode ${cmd[*]}")
	t0=$SECONDS
	(cd "$IDPBENCH_ROOT" && IDPBENCH_MODE="$mode" IDPBENCH_RESULTS="$RESULTS" "${cmd[@]}") ||
		die "the $mode run failed (above; its directory: $RESULTS/$RUN_ID-$mode)"
	log "$mode run: $((SECONDS - t0)) s"
done

step 3 3 "side by side: $RESULTS/$RUN_ID/CONTAINER-COST.md"
mkdir -p "$RESULTS/$RUN_ID"
out="$RESULTS/$RUN_ID/CONTAINER-COST.md"
{
	printf '# What the container costs: %s natively and in compose mode\n\n' "$PRODUCT"
	# shellcheck disable=SC2016 # the backquotes are Markdown's
	printf 'Made by `scripts/native-vs-compose.sh --only %s --repeats %s --run-id %s` on %s (%s s), which ran:\n\n' \
		"$PRODUCT" "$REPEATS" "$RUN_ID" "$(date -u +%Y-%m-%d)" "$((SECONDS - start))"
	printf '    %s\n' "${commands[@]}"
	printf '    aggregate compare --footprint %s %s\n\n' "$RUN_ID-native" "$RUN_ID-compose"
	printf 'OLD is native mode, NEW compose mode: a change is what the containers cost (or save). The runs were one after the other, native first: a drift of the machine between them is in the difference.\n\n'
	"$(tool aggregate)" compare --footprint "$RESULTS/$RUN_ID-native" "$RESULTS/$RUN_ID-compose"
} >"$out.tmp" || { rm -f "$out.tmp"; die "aggregate compare failed (above)"; }
mv "$out.tmp" "$out"
log "done in $((SECONDS - start)) s: $out"
