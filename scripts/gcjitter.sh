#!/usr/bin/env bash
# gcjitter.sh: the GC-jitter run of one running product: one continuous load
# step, long enough for garbage collectors and background jobs to show up in
# the P99 of its intervals.
#
#   scripts/gcjitter.sh PRODUCT [--quick] [--run-dir DIR] [--state-dir DIR]
#                       [--step-offset K --step-total T]
#
#   --quick          60 s instead of 2 minutes
#   --run-dir DIR    result: DIR/PRODUCT/gcjitter.json (env RUN_DIR); a complete one is skipped
#   --state-dir DIR  the product's state, from its adapter's up and setup (env STATE_DIR)
#   --step-offset K, --step-total T   the step counter's start and bound (run-comparison.sh)
#
# One loadstep at c=32 on userinfo (S6, else client_credentials), 5 s warmup,
# 10 s intervals, label phase=gcjitter. The product must be up and set up.
#
# Environment: IDPBENCH_GCJITTER_S (duration), IDPBENCH_GCJITTER_C (connections),
# IDPBENCH_GCJITTER_WARMUP_S (else IDPBENCH_WARMUP_S, else 5), IDPBENCH_REUSE_POOL
# (256), IDPBENCH_REUSE_MAX_AGE_S (120), IDPBENCH_DRIVER_CPUS, IDPBENCH_BIN.
#
# Exit codes: 0 ok, 1 failure, 2 usage, 130 interrupted.
#
#   IDPBENCH_GCJITTER_S=300 scripts/gcjitter.sh keycloak --run-dir results/mine --state-dir "$st"
#
# Rules and records: docs/design.md#methodology-as-implemented (GC jitter).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=gcjitter

# Seconds a pool must stay valid after the window ends (minting and startup slack).
TTL_MARGIN_S=30

usage() {
	script_help
	exit 2
}

main() {
	parse_run_args 1 1 "$@"
	run_gcjitter "${RUN_ARGS[0]}" "$RUN_QUICK" "$RUN_DIR" "$STATE_DIR" "$STEP_OFFSET" "$STEP_TOTAL"
}

run_gcjitter() {
	local product="$1" quick="$2" run_dir="$3" state="$4" offset="$5" total="$6"
	local adapter="$IDPBENCH_ROOT/scripts/products/$product" out="$run_dir/$product/gcjitter.json"
	[[ -x "$adapter" ]] || die "no adapter $adapter"
	mkdir -p "$run_dir/$product" "$state/pools"
	if record_complete "$out"; then
		step $((offset + 1)) "$total" "$product gcjitter: complete, skipped"
		return 0
	fi
	local duration warmup c profile
	c="${IDPBENCH_GCJITTER_C:-32}"
	warmup="${IDPBENCH_GCJITTER_WARMUP_S:-${IDPBENCH_WARMUP_S:-5}}"
	if ((quick)); then
		duration="${IDPBENCH_GCJITTER_S:-60}" profile=quick
	else
		duration="${IDPBENCH_GCJITTER_S:-120}" profile=full
	fi

	local scenario labels=() ttl run_s=$((warmup + duration))
	ttl="$("$adapter" ttl "$state" userinfo)"
	scenario="$(pick_scenario "$adapter" "$state" "$run_s" "$ttl")"
	if [[ "$scenario" != userinfo ]]; then
		labels=(--label fallback=client_credentials --label "fallback_reason=${scenario#*|}")
		scenario=client_credentials
	fi

	local url extra_txt extra=() mode="" i poolargs=()
	url="$("$adapter" endpoint "$state" "$scenario")"
	extra_txt="$("$adapter" loadargs "$state" "$scenario")"
	[[ -n "$extra_txt" ]] && mapfile -t extra <<<"$extra_txt"
	for ((i = 0; i < ${#extra[@]}; i++)); do
		[[ "${extra[i]}" == --pool-mode ]] && mode="${extra[i + 1]}"
	done
	# As before every ladder step: the adapter's fresh start (refop only).
	"$adapter" fresh "$state" "$scenario" || die "$product did not start again before the GC-jitter run"
	case "$mode" in
	"") ;;
	reuse) poolargs=(--pool "$(reuse_pool "$adapter" "$state" "$scenario" "$run_s" "$ttl")") ;;
	*) die "$product $scenario: pool mode $mode cannot feed one long step (want reuse or none)" ;;
	esac

	# The product's own metrics every 5 s (adapter metricsargs; none: not scraped).
	local metrics_txt metrics=()
	metrics_txt="$("$adapter" metricsargs "$state" "$scenario")"
	[[ -n "$metrics_txt" ]] && mapfile -t metrics <<<"$metrics_txt" && metrics+=(--server-metrics-every 5s)

	step_upto $((offset + 1)) "$total" "$product gcjitter $scenario c=$c (${warmup}s + ${duration}s, 10s intervals; ends in >= $((warmup + duration))s)"
	local rc=0 loadstep version
	loadstep="$(tool loadstep)"
	version="$("$adapter" version)"
	pinned driver "$loadstep" --url "$url" --scenario "$scenario" -c "$c" \
		--warmup "${warmup}s" --duration "${duration}s" --interval 10s --timeout 10s \
		--jit-pidfile "$state/pids/$product.pid" \
		--product "$product" --product-version "$version" \
		--label phase=gcjitter --label "profile=$profile" "${labels[@]}" \
		"${extra[@]}" "${poolargs[@]}" "${metrics[@]}" -o "$out" || rc=$?
	case "$rc" in
	0) log "$product gcjitter: $(jq -c '{status, requests, error_rate, intervals: (.intervals | length)}' "$out")" ;;
	130) log "interrupted at $product gcjitter" && exit 130 ;;
	4) die "$product stopped accepting connections during the GC-jitter run ($(jq -r '.target_lost_at' "$out"))" ;;
	*) die "loadstep failed at $product gcjitter (exit $rc)" ;;
	esac
}

# pick_scenario ADAPTER STATE RUN_S TTL prints "userinfo", or
# "client_credentials|WHY" when userinfo is N/A for the product or its access
# tokens (TTL seconds; "" = unknown) expire within RUN_S + TTL_MARGIN_S.
pick_scenario() {
	local adapter="$1" state="$2" run_s="$3" ttl="$4" rc=0
	"$adapter" endpoint "$state" userinfo >/dev/null 2>&1 || rc=$?
	if ((rc == 3)); then
		echo "client_credentials|userinfo is N/A for this product"
		return 0
	fi
	((rc == 0)) || die "$adapter endpoint userinfo failed (exit $rc)"
	if [[ -n "$ttl" ]] && ((ttl < run_s + TTL_MARGIN_S)); then
		log "userinfo access tokens live ${ttl}s, less than the ${run_s}s run: falling back to client_credentials"
		echo "client_credentials|access tokens live ${ttl}s, less than the ${run_s}s run"
		return 0
	fi
	echo userinfo
}

# reuse_pool ADAPTER STATE SCENARIO RUN_S TTL prints the path of a reuse pool
# for the run: the ladder's STATE/pools/SCENARIO.pool when it is younger than
# IDPBENCH_REUSE_MAX_AGE_S and its tokens outlive the run, else a freshly
# minted one in its place.
reuse_pool() {
	local adapter="$1" state="$2" scenario="$3" run_s="$4" ttl="$5" pool size age=-1
	pool="$state/pools/$scenario.pool"
	size="${IDPBENCH_REUSE_POOL:-256}"
	[[ -s "$pool" ]] && age=$((EPOCHSECONDS - $(stat -c %Y "$pool")))
	if ((age >= 0 && age < ${IDPBENCH_REUSE_MAX_AGE_S:-120})) &&
		[[ -z "$ttl" || $((ttl - age)) -ge $((run_s + TTL_MARGIN_S)) ]]; then
		log "reusing the ladder's $scenario pool ($pool, ${age}s old)"
	else
		log "minting a reuse pool of $size for $scenario"
		pinned driver "$adapter" pools "$state" "$scenario" "$size" "$pool" >&2
	fi
	echo "$pool"
}

main "$@"
