#!/usr/bin/env bash
# ladder.sh: the connection ladder of one scenario on one running product.
#
#   scripts/ladder.sh PRODUCT SCENARIO [--quick] [--repeats N [--round K]]
#                     [--full-ladder] [--run-dir DIR] [--state-dir DIR]
#                     [--step-offset K --step-total T]
#
#   --quick          smoke profile: ladder 2 8 32, warmup 1-5 s, windows of 3 s
#                    (default: 2 4 8 16 32 64 128, warmup 3-60 s, 10 s)
#   --repeats N      round 1 to the knee, then N-1 more windows of each candidate
#                    steady level (default 1)
#   --round K        measure only round K (K >= 2 needs round 1's knee record)
#   --full-ladder    measure every level; SCENARIO.knee.json says where it would stop
#   --run-dir DIR    results: DIR/PRODUCT/SCENARIO-c<N>[-r<K>].json (env RUN_DIR)
#   --state-dir DIR  the product's state, from its adapter's up and setup (env STATE_DIR)
#   --step-offset K, --step-total T   the step counter's start and bound (run-comparison.sh)
#
# The product must be up and set up (scripts/products/PRODUCT up, setup). A
# complete step is skipped, so a rerun resumes.
#
# Environment: IDPBENCH_LADDER, IDPBENCH_DURATION_S, IDPBENCH_WARMUP_S (floor),
# IDPBENCH_WARMUP_MAX_S (cap; <= floor: fixed), IDPBENCH_WARMUP_TOLERANCE_PCT (10),
# IDPBENCH_WARMUP_JIT_MAX_PCT (5), IDPBENCH_REPEATS, IDPBENCH_ROUND,
# IDPBENCH_FULL_LADDER, IDPBENCH_REUSE_POOL (256), IDPBENCH_REUSE_MAX_AGE_S (120),
# IDPBENCH_CONSUME_PER_CONN_QPS (50), IDPBENCH_POOL_CAP (100000),
# IDPBENCH_DRIVER_CPUS, IDPBENCH_BIN.
#
# Exit codes: 0 ok, 1 failure, 2 usage, 3 scenario N/A for the product,
# 4 the product stopped answering (STATE_DIR/lost says how), 130 interrupted.
#
#   st="$(mktemp -d)"; scripts/products/refop up "$st" && scripts/products/refop setup "$st"
#   scripts/ladder.sh refop userinfo --quick --run-dir results/mine --state-dir "$st"
#
# Rules and records: docs/design.md#methodology-as-implemented (Ladder, Warmup,
# Knee, Repeats) and #the-scripts.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=ladder

usage() {
	script_help
	exit 2
}

# pool_size MODE C PREV_STEP_JSON WARMUP_S DURATION_S prints a step's pool size
# (`aggregate ladder pool-size`; the rule: docs/design.md#the-scripts).
pool_size() {
	local from=()
	[[ -s "$3" ]] && from=(--prev "$3")
	"$(tool aggregate)" ladder pool-size --mode "$1" -c "$2" "${from[@]}" --warmup "$4" --duration "$5" \
		--per-conn-qps "${IDPBENCH_CONSUME_PER_CONN_QPS:-50}" --cap "${IDPBENCH_POOL_CAP:-100000}" \
		--reuse "${IDPBENCH_REUSE_POOL:-256}"
}

# check_health ADAPTER STATE WHEN: exit 4 with the reason (logged and in
# STATE/lost) when the product no longer runs or answers.
check_health() {
	local why
	why="$("$1" health "$2")" && return 0
	[[ -n "$why" ]] || why="the health check of its adapter failed without a reason"
	printf '%s\n' "stopped answering $3: $why" >"$2/lost"
	log "$(basename "$1"): stopped answering $3: $why"
	exit 4
}

# sizing_step PREV DIR SCENARIO C R prints the step a consumed pool is sized
# from: the previous window of the ladder, or in a later round (PREV empty)
# the same step's window of the round before, in DIR.
sizing_step() {
	local prev="$1" dir="$2" scenario="$3" c="$4" r="$5" before
	if [[ -z "$prev" ]] && ((r > 1)); then
		before="$dir/$scenario-c$c.json"
		((r == 2)) || before="$dir/$scenario-c$c-r$((r - 1)).json"
		[[ -s "$before" ]] && prev="$before"
	fi
	printf '%s\n' "$prev"
}

# reuse_fresh ADAPTER STATE SCENARIO AGE STEP_S succeeds when a reuse pool
# AGE seconds old still serves a step of at most STEP_S seconds.
reuse_fresh() {
	local ttl max="${IDPBENCH_REUSE_MAX_AGE_S:-}"
	ttl="$("$1" ttl "$2" "$3")"
	[[ -n "$ttl" || -n "$max" ]] || max=120
	[[ -z "$max" ]] || (($4 < max)) || return 1
	[[ -z "$ttl" ]] || (($4 + $5 + 30 < ttl))
}

# file_age_s FILE prints seconds since FILE was modified.
file_age_s() {
	echo $((EPOCHSECONDS - $(stat -c %Y "$1")))
}

main() {
	parse_run_args 2 "" "$@"
	run_ladder "${RUN_ARGS[0]}" "${RUN_ARGS[1]}" "$RUN_QUICK" "$RUN_DIR" "$STATE_DIR" "$STEP_OFFSET" "$STEP_TOTAL"
}

run_ladder() {
	local product="$1" scenario="$2" quick="$3" run_dir="$4" state="$5" offset="$6" total="$7"
	local adapter="$IDPBENCH_ROOT/scripts/products/$product"
	[[ -x "$adapter" ]] || die "no adapter $adapter"
	local ladder warmup warmup_max duration profile
	if ((quick)); then
		ladder="${IDPBENCH_LADDER:-2 8 32}" warmup="${IDPBENCH_WARMUP_S:-1}" warmup_max="${IDPBENCH_WARMUP_MAX_S:-5}"
		duration="${IDPBENCH_DURATION_S:-3}" profile=quick
	else
		ladder="${IDPBENCH_LADDER:-2 4 8 16 32 64 128}" warmup="${IDPBENCH_WARMUP_S:-3}" warmup_max="${IDPBENCH_WARMUP_MAX_S:-60}"
		duration="${IDPBENCH_DURATION_S:-10}" profile=full
	fi
	[[ "$warmup" =~ ^[0-9]+$ && "$warmup_max" =~ ^[0-9]+$ && "$duration" =~ ^[1-9][0-9]*$ ]] ||
		die "IDPBENCH_WARMUP_S $warmup, IDPBENCH_WARMUP_MAX_S $warmup_max, IDPBENCH_DURATION_S $duration: want whole seconds"
	# A cap at or below the floor is a fixed warmup; the JIT rule: docs/design.md (Warmup).
	local jit_max="${IDPBENCH_WARMUP_JIT_MAX_PCT:-5}"
	[[ "$jit_max" =~ ^[0-9]+$ ]] || die "IDPBENCH_WARMUP_JIT_MAX_PCT $jit_max: want a whole percent (0: record the JIT, do not wait for it)"
	local warmargs=(--warmup "${warmup}s" --jit-pidfile "$state/pids/$product.pid") warm_most="$warmup"
	if ((warmup_max > warmup)); then
		warmargs+=(--warmup-max "${warmup_max}s" --warmup-stable 3 --warmup-tolerance "${IDPBENCH_WARMUP_TOLERANCE_PCT:-10}"
			--warmup-jit-max "$jit_max")
		warm_most="$warmup_max"
	fi
	local url rc=0
	url="$("$adapter" endpoint "$state" "$scenario")" || rc=$?
	((rc == 0)) || { ((rc == 3)) && exit 3; die "$product endpoint $scenario failed (exit $rc)"; }

	local extra_txt extra=() mode="" i
	extra_txt="$("$adapter" loadargs "$state" "$scenario")"
	[[ -n "$extra_txt" ]] && mapfile -t extra <<<"$extra_txt"
	for ((i = 0; i < ${#extra[@]}; i++)); do
		[[ "${extra[i]}" == --pool-mode ]] && mode="${extra[i + 1]}"
	done

	local metrics_txt metrics=()
	metrics_txt="$("$adapter" metricsargs "$state" "$scenario")"
	[[ -n "$metrics_txt" ]] && mapfile -t metrics <<<"$metrics_txt"

	local version loadstep steps=() c
	version="$("$adapter" version)"
	loadstep="$(tool loadstep)"
	read -r -a steps <<<"$ladder"
	mkdir -p "$run_dir/$product" "$state/pools"

	local repeats="${IDPBENCH_REPEATS:-1}" round="${IDPBENCH_ROUND:-}" full="${IDPBENCH_FULL_LADDER:-0}"
	[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || die "IDPBENCH_REPEATS (--repeats) $repeats: want a whole number >= 1"
	[[ -z "$round" ]] || { [[ "$round" =~ ^[1-9][0-9]*$ ]] && ((round <= repeats)); } ||
		die "IDPBENCH_ROUND (--round) $round: want a whole number from 1 to the repeats ($repeats)"
	[[ "$full" == 0 || "$full" == 1 ]] || die "IDPBENCH_FULL_LADDER $full: want 0 or 1"

	local aggregate dir="$run_dir/$product" knee="$run_dir/$product/$scenario.knee.json" kneeargs cands=()
	aggregate="$(tool aggregate)"
	kneeargs=(ladder knee --dir "$dir" --scenario "$scenario" --ladder "$ladder")
	((full)) && kneeargs+=(--full-ladder)
	if [[ -n "$round" ]] && ((round > 1)); then
		read -r -a cands <<<"$("$aggregate" ladder candidates --dir "$dir" --scenario "$scenario")"
		log "$product $scenario round $round repeats c=${cands[*]:-(none)}: $(jq -r .candidates_reason "$knee")"
	fi
	# At most this many windows: round 1 may stop at its knee, and later
	# rounds repeat at most 3 candidates.
	local bound="${#steps[@]}" lower=$((${#steps[@]} < 3 ? ${#steps[@]} : 3))
	[[ -z "$round" ]] && bound=$((bound + (repeats - 1) * lower))
	[[ -n "$round" ]] && ((round > 1)) && bound="${#cands[@]}"
	[[ -n "$total" ]] || total="$bound"

	local n=0 prev="" out pool name replabel=() skipped=() r
	rm -f "$state/lost" "$state/ladder.windows"
	check_health "$adapter" "$state" "before the $scenario ladder"
	if [[ -z "$round" || "$round" == 1 ]]; then
		# A resumed round 1 that stopped at its knee does not measure what it skipped.
		if ((!full)) && [[ -s "$knee" ]]; then
			mapfile -t skipped < <(jq -r 'if .full_ladder then empty else .skipped[] end' "$knee")
		fi
		for c in "${steps[@]}"; do
			if [[ " ${skipped[*]} " == *" $c "* ]]; then
				log "$product $scenario c=$c: skipped: round 1 stopped at its knee ($(jq -r .reason "$knee"))"
				continue
			fi
			measure_window "$c" 1
			if [[ "$("$aggregate" "${kneeargs[@]}" --at "$c")" == stop ]]; then
				log "$product $scenario: round 1 stops after c=$c: $(jq -r .reason "$knee")"
				break
			fi
		done
		[[ -s "$knee" ]] && ((full)) && log "$product $scenario: --full-ladder: $(jq -r 'if .stopped_after > 0 then "the knee rule would have stopped after c=\(.stopped_after): " else "" end + .reason' "$knee")"
		if [[ -z "$round" ]] && ((repeats > 1)); then
			read -r -a cands <<<"$("$aggregate" ladder candidates --dir "$dir" --scenario "$scenario")"
			log "$product $scenario repeats c=${cands[*]:-(none)}: $(jq -r .candidates_reason "$knee")"
			for c in "${cands[@]}"; do
				for ((r = 2; r <= repeats; r++)); do measure_window "$c" "$r"; done
			done
		fi
	else
		for c in "${cands[@]}"; do measure_window "$c" "$round"; done
	fi
	# How many windows this ladder went through, for run-comparison.sh's step counter.
	echo "$n" >"$state/ladder.windows"
}

# measure_window C R measures (or, when its file is complete, skips) window
# R of the level of C connections; it runs inside run_ladder and uses its
# variables.
measure_window() {
	local c="$1" r="$2" rc
	n=$((n + 1))
	name="c=$c" replabel=()
	out="$(step_file "$run_dir/$product" "$scenario" "$c" "$r")"
	if ((repeats > 1)); then
		name="c=$c #$r/$repeats" replabel=(--label "repeat=$r")
	fi
	if record_complete "$out"; then
		step_upto $((offset + n)) "$total" "$product $scenario $name: complete, skipped"
		prev="$out"
		return 0
	fi
	local wtext="${warmup}s"
	((warm_most > warmup)) && wtext="${warmup}-${warm_most}s"
	step_upto $((offset + n)) "$total" "$product $scenario $name (warmup ${wtext} + ${duration}s; at most $((bound - n)) more windows in this ladder)"
	# A product that keeps what it issues in memory starts again empty (the
	# adapter's fresh: a no-op for the others), before its pools are minted.
	"$adapter" fresh "$state" "$scenario" || die "$product did not start again before $scenario $name"
	local poolargs=()
	if [[ -n "$mode" ]]; then
		pool="$(step_pool "$adapter" "$state" "$scenario" "$mode" "$c" "$(sizing_step "$prev" "$run_dir/$product" "$scenario" "$c" "$r")" "$warm_most" "$duration")"
		poolargs=(--pool "$pool")
	fi
	rc=0
	pinned driver "$loadstep" --url "$url" --scenario "$scenario" -c "$c" \
		"${warmargs[@]}" --duration "${duration}s" --interval 1s --timeout 10s \
		--product "$product" --product-version "$version" \
		--label phase=ladder --label "profile=$profile" "${replabel[@]}" \
		"${extra[@]}" "${poolargs[@]}" "${metrics[@]}" -o "$out" || rc=$?
	[[ "$mode" == reuse ]] || rm -f "${pool:-}"
	case "$rc" in
	0 | 4) ;;
	130) log "interrupted at $product $scenario $name" && exit 130 ;;
	*) die "loadstep failed at $product $scenario $name (exit $rc)" ;;
	esac
	check_health "$adapter" "$state" "in the $scenario ladder at c=$c"
	if ((rc == 4)); then
		# The product answers again, but the step lost it: not a measurement.
		printf '%s\n' "lost its target in the $scenario ladder at c=$c, then answered again (the step is kept as target_lost; a rerun measures it again)" >"$state/lost"
		log "$product: $(<"$state/lost")"
		exit 4
	fi
	prev="$out"
}

# step_file DIR SCENARIO C R prints the file of window R at C connections.
step_file() {
	if (($4 == 1)); then
		printf '%s/%s-c%s.json\n' "$1" "$2" "$3"
	else
		printf '%s/%s-c%s-r%s.json\n' "$1" "$2" "$3" "$4"
	fi
}

# step_pool ADAPTER STATE SCENARIO MODE C PREV W D mints (or reuses) the pool
# of one step (W: the longest its warmup may be) and prints its path.
step_pool() {
	local adapter="$1" state="$2" scenario="$3" mode="$4" c="$5" prev="$6" w="$7" d="$8" pool size
	size="$(pool_size "$mode" "$c" "$prev" "$w" "$d")"
	if [[ "$mode" == reuse ]]; then
		pool="$state/pools/$scenario.pool"
		if [[ -s "$pool" ]] && reuse_fresh "$adapter" "$state" "$scenario" "$(file_age_s "$pool")" $((w + d)); then
			echo "$pool"
			return 0
		fi
	else
		pool="$state/pools/$scenario-c$c.pool"
	fi
	log "minting a $mode pool of $size for $scenario c=$c"
	pinned driver "$adapter" pools "$state" "$scenario" "$size" "$pool" >&2
	echo "$pool"
}

main "$@"
