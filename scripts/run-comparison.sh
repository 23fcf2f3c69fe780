#!/usr/bin/env bash
# run-comparison.sh: the whole comparison, the products round by round.
#
#   scripts/run-comparison.sh [--quick] [--fresh] [--only P[,P]] [--run-id ID]
#                             [--repeats N] [--full-ladder]
#                             [--driver-cpus LIST --server-cpus LIST | --no-pin]
#
# Builds the tools, starts one shared PostgreSQL, then per product: install,
# cold starts A and B, setup, every scenario's ladder (scripts/ladder.sh) in
# each round, GC jitter (scripts/gcjitter.sh), meta, down; then
# results/ID/COMPARISON.md and results/latest. The full profile takes about
# an hour for refop, Hydra and Keycloak on 2 CPUs.
#
#   --quick        smoke profile: ladder 2 8 32, warmup 1-5 s, 3 s windows, 1 round,
#                  GC jitter 60 s (default: full, 2..128, 3-60 s, 10 s, 3 rounds, 2 min)
#   --fresh        delete the run directory first (default: resume it)
#   --only P,..    products (default: refop hydra keycloak zitadel; unknown: an N/A row)
#   --run-id ID    results/ID (default "quick", or "full-YYYYMMDD"); a rerun resumes
#   --repeats N    rounds, so a steady level has N windows (env IDPBENCH_REPEATS;
#                  default 3, --quick 1; aggregate compare needs >= 4, 5 is a good start)
#   --full-ladder  measure every ladder to its end (env IDPBENCH_FULL_LADDER=1)
#   --driver-cpus LIST, --server-cpus LIST
#                  pin loadstep, minting, sampler and coldstart to one set, the product
#                  and PostgreSQL to the other (taskset lists "3", "0-2", "0,2"; env
#                  IDPBENCH_DRIVER_CPUS, IDPBENCH_SERVER_CPUS); both or neither, disjoint.
#                  Default: with >= 4 CPUs a quarter, the highest, for the driver; else shared
#   --no-pin       share every CPU (env IDPBENCH_PIN=0)
#
# Environment: IDPBENCH_SCENARIOS, IDPBENCH_RESULTS (default <repo>/results),
# IDPBENCH_NO_BUILD=1 (use the tools in IDPBENCH_BIN), IDPBENCH_TMP, IDPBENCH_CACHE,
# ZITADEL_BIN, IDPBENCH_MODE, IDPBENCH_OIDC_CONFIG, and ladder.sh's and
# gcjitter.sh's variables.
#
# Exit codes: 0 ok (a product that cannot be installed here is an N/A row), 1 a
# product failed after install or left something behind, or the run id is
# held by a live session, 2 usage, 130 interrupted.
#
#   scripts/run-comparison.sh --quick --only refop,hydra
#   scripts/run-comparison.sh --repeats 5 --run-id base
#
# Rules and records: docs/design.md#the-scripts and #methodology-as-implemented.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.sh"
export IDPBENCH_LOG_TAG=run

DEFAULT_PRODUCTS=(refop hydra keycloak zitadel)
read -r -a SCENARIOS <<<"${IDPBENCH_SCENARIOS:-discovery client_credentials client_credentials_login jwt_bearer introspect auth_code refresh userinfo}"

WORK=""
FAILED=0

usage() {
	script_help
	exit 2
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	local p="" state line ups=()
	# $WORK/up names the products that are up, one "PRODUCT STATE" a line
	# (run_product runs in a subshell; between its rounds a product stays up).
	if [[ -n "$WORK" && -s "$WORK/up" ]]; then mapfile -t ups <"$WORK/up"; fi
	((${#ups[@]} == 0)) || read -r p _ <<<"${ups[0]}"
	# The phase that ran (an interrupted one too) ends here; cleanup is the last.
	if [[ -n "$WORK" && -s "$WORK/phase" ]]; then phase_step teardown "$p" "cleanup (exit $rc)"; fi
	if [[ -n "$WORK" ]]; then stop_sampler || true; fi
	for line in "${ups[@]}"; do
		read -r p state <<<"$line"
		log "cleanup: stopping $p"
		"$(adapter "$p")" down "$state" || warn "$p: down during cleanup failed"
	done
	if [[ -n "${IDPBENCH_PG_DIR:-}" ]]; then pg_down || warn "PostgreSQL: down during cleanup failed"; fi
	if [[ -n "$WORK" ]]; then
		# What a failed down left is stopped here, by its recorded identity.
		"$IDPBENCH_BIN/runstate" stop "$WORK" || warn "something the run recorded could not be stopped or removed (above)"
		phase_step
		"$IDPBENCH_BIN/runstate" release "$WORK" || warn "the run state $WORK could not be deleted"
	fi
	exit "$rc"
}

adapter() { printf '%s/scripts/products/%s\n' "$IDPBENCH_ROOT" "$1"; }

# na_meta PRODUCT VERSION REASON FILE writes the meta of a product that did
# not run (provision meta writes it atomically).
na_meta() {
	"$(tool provision)" meta --product "$1" --product-version "$2" --status na --na-reason "$3" -o "$4"
}

# product_meta PRODUCT STATE START STATUS REASON writes RUN_DIR/PRODUCT/meta.json:
# the adapter's meta (else a bare one) completed with the run's part (provision meta).
product_meta() {
	local p="$1" state="$2" start="$3" status="$4" reason="$5" base=() args=() txt
	if "$(adapter "$p")" meta "$state" >"$WORK/$p-meta.json"; then
		base=(--base "$WORK/$p-meta.json")
	else
		base=(--product "$p" --product-version "$("$(adapter "$p")" version 2>/dev/null || true)")
	fi
	[[ -z "$start" ]] || args+=(--start "$start")
	[[ -z "$reason" ]] || args+=(--na-reason "$reason")
	txt="$("$(tool provision)" placement --format meta)"
	mapfile -t -O "${#args[@]}" args <<<"$txt"
	args+=(--rounds "${IDPBENCH_REPEATS:-1}")
	((${IDPBENCH_REPEATS:-1} == 1)) || args+=(--round-order interleaved)
	"$(tool provision)" meta "${base[@]}" --status "$status" --profile "$PROFILE" \
		--scenarios "${SCENARIOS[*]}" "${args[@]}" -o "$RUN_DIR/$p/meta.json"
}

# run_product PRODUCT ROUND: round ROUND of one product (round 1 opens it, the
# last closes it; docs/design.md#the-scripts). Non-zero when it failed (the
# meta says why); exits 130 when interrupted.
run_product() {
	local p="$1" round="$2" state="$WORK/$1" start rc s what rounds="${IDPBENCH_REPEATS:-1}" why
	if ((round == 1)); then
		open_product "$p" || return $?
		[[ ! -e "$WORK/out-$p" ]] || return 0 # N/A here: nothing more to run
	elif ! why="$("$(adapter "$p")" health "$state")"; then
		product_failed "$p" "$state" "$(<"$WORK/$p.start")" "stopped answering while idle before round $round: $why"
		return 1
	fi
	start="$(<"$WORK/$p.start")"
	start_sampler "$p" "$state"
	for s in "${SCENARIOS[@]}"; do
		what="$s"
		((rounds == 1)) || what="$s (round $round/$rounds)"
		phase_step ladder "$p" "$p ladder $what"
		rc=0
		rm -f "$state/ladder.windows"
		IDPBENCH_ROUND="$round" "$IDPBENCH_ROOT/scripts/ladder.sh" "$p" "$s" "${QUICK[@]}" --run-dir "$RUN_DIR" --state-dir "$state" \
			--step-offset "$STEP" --step-total "$STEP_TOTAL" || rc=$?
		# The windows the ladder went through (it may stop at its knee).
		STEP=$((STEP + $(cat "$state/ladder.windows" 2>/dev/null || echo 0)))
		echo "$STEP" >"$WORK/step"
		case "$rc" in
		0 | 3) ;;
		4) product_failed "$p" "$state" "$start" "$(cat "$state/lost" 2>/dev/null || echo "stopped answering in the $what ladder")"; return 1 ;;
		130) exit 130 ;;
		*) product_failed "$p" "$state" "$start" "failed in the $what ladder (exit $rc)"; return 1 ;;
		esac
	done
	if ((round < rounds)); then
		stop_sampler
		return 0
	fi
	phase_step gcjitter "$p" "$p gcjitter"
	rc=0
	"$IDPBENCH_ROOT/scripts/gcjitter.sh" "$p" "${QUICK[@]}" --run-dir "$RUN_DIR" --state-dir "$state" \
		--step-offset "$STEP" --step-total "$STEP_TOTAL" || rc=$?
	STEP=$((STEP + 1))
	echo "$STEP" >"$WORK/step"
	case "$rc" in
	0) ;;
	130) exit 130 ;;
	*) product_failed "$p" "$state" "$start" "failed in the GC-jitter run (exit $rc)"; return 1 ;;
	esac
	stop_sampler
	phase_step teardown "$p" "$p meta + down"
	product_meta "$p" "$state" "$start" ok ""
	product_down "$p" "$state"
}

# open_product PRODUCT: install, up (cold start A), restart (cold start B), setup;
# one that cannot be installed gets its N/A meta and is marked out ($WORK/out-PRODUCT).
open_product() {
	local p="$1" a state="$WORK/$1" start version rc=0 reason no_start="no reason given (see the run's log)"
	a="$(adapter "$p")"
	mkdir -p "$RUN_DIR/$p"
	start="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "$start" >"$WORK/$p.start"
	if [[ ! -x "$a" ]]; then
		log "$p: no adapter $a: N/A"
		na_meta "$p" "" "no adapter scripts/products/$p in this tree yet" "$RUN_DIR/$p/meta.json"
		touch "$WORK/out-$p"
		return 0
	fi
	version="$("$a" version)"
	phase_step install "$p" "$p install"
	if ! with_reason "$p" "$a" install; then
		reason="$(failure_reason "$p" "install failed on this machine (see the log of the run)")"
		na_meta "$p" "$version" "$reason" "$RUN_DIR/$p/meta.json"
		# Not a failure of the run: a product that cannot run here is an N/A row.
		warn "$p cannot run on this machine: N/A in the report"
		touch "$WORK/out-$p"
		return 0
	fi
	mkdir -p "$state"
	echo "$p $state" >>"$WORK/up"
	phase_step coldstart "$p" "$p up (cold start A: fresh database)"
	with_reason "$p" "$a" up "$state" || rc=$?
	keep_coldstart "$p" "$state" A
	((rc == 0)) || { product_failed "$p" "$state" "$start" "up failed: $(failure_reason "$p" "$no_start")"; return 1; }
	if record_complete "$RUN_DIR/$p/coldstart-B.json"; then
		log "$p: coldstart-B.json is complete: restart skipped"
	else
		phase_step coldstart "$p" "$p restart (cold start B: initialised database)"
		with_reason "$p" "$a" restart "$state" || rc=$?
		keep_coldstart "$p" "$state" B
		((rc == 0)) || { product_failed "$p" "$state" "$start" "restart failed: $(failure_reason "$p" "$no_start")"; return 1; }
	fi
	phase_step setup "$p" "$p setup"
	with_reason "$p" "$a" setup "$state" ||
		{ product_failed "$p" "$state" "$start" "setup failed: $(failure_reason "$p" "provisioning through the admin API failed")"; return 1; }
}

# keep_coldstart PRODUCT STATE MODE copies this session's coldstart record into
# the run, unless the run already holds a complete one.
keep_coldstart() {
	local src="$2/coldstart-$3.json" dst="$RUN_DIR/$1/coldstart-$3.json"
	[[ -s "$src" ]] || return 0
	if record_complete "$dst"; then
		log "$1: kept the complete $(basename "$dst") of an earlier session"
		return 0
	fi
	cp "$src" "$dst.tmp" && mv "$dst.tmp" "$dst"
}

# with_reason PRODUCT CMD... runs CMD with IDPBENCH_REASON_FILE naming a fresh
# WORK/PRODUCT.reason: the first failure of the adapter or a tool it runs
# leaves its reason there (die, cli.NoteReason).
with_reason() {
	rm -f "$WORK/$1.reason"
	IDPBENCH_REASON_FILE="$WORK/$1.reason" "${@:2}"
}

# failure_reason PRODUCT DEFAULT prints the reason with_reason's command left, else DEFAULT.
failure_reason() {
	local why=""
	[[ ! -s "$WORK/$1.reason" ]] || why="$(head -n1 "$WORK/$1.reason")"
	printf '%s\n' "${why:-$2}"
}

# start_sampler PRODUCT STATE samples the product, its database and the host
# until stop_sampler (what and why: docs/design.md#the-scripts, sampler).
start_sampler() {
	local p="$1" state="$2" args=() txt envs=() pin=()
	[[ -x "$IDPBENCH_BIN/sampler" ]] || { warn "sampler is not built: no memory/CPU samples"; return 0; }
	if ! txt="$("$(adapter "$p")" sampleargs "$state")" || [[ -z "$txt" ]]; then
		warn "$p sampleargs failed: no memory/CPU samples"
		return 0
	fi
	mapfile -t args <<<"$txt"
	[[ -s "$state/secrets/pgpass" ]] && envs=(env "PGPASSFILE=$state/secrets/pgpass")
	# The sampler measures: it runs with the load generator, on the driver CPUs
	# (taskset execs it, so the recorded pid is the sampler's).
	mapfile -t pin < <(pin_prefix driver)
	start_bg sampler "$WORK/pids/sampler.pid" "$WORK/sampler.log" "${pin[@]}" "${envs[@]}" "$(tool sampler)" "${args[@]}" \
		--every 1s --pss-every 2s -o "$RUN_DIR/$p/samples-$(date -u +%Y%m%dT%H%M%SZ).jsonl"
}

# stop_sampler stops the sampler with SIGINT (its normal stop) and waits for it.
stop_sampler() {
	[[ -n "$WORK" && -s "$WORK/pids/sampler.pid" ]] || return 0
	signal_stop "$WORK/pids/sampler.pid" INT 30 || warn "sampler did not stop cleanly (log: $WORK/sampler.log)"
}

# product_failed PRODUCT STATE START REASON: meta with status na, then down.
product_failed() {
	log "$1: $4"
	phase_step teardown "$1" "$1 meta + down after a failure"
	product_meta "$1" "$2" "$3" na "$4"
	touch "$WORK/out-$1"
	product_down "$1" "$2" || true
}

# product_down PRODUCT STATE stops the product and asserts nothing is left.
product_down() {
	local rc=0
	stop_sampler || true
	"$(adapter "$1")" down "$2" || rc=$?
	up_forget "$1"
	# What down could not stop stays recorded in its state, for a rerun to clean.
	((rc == 0)) || { log "$1: down left something behind (kept in $2 for a rerun to clean)"; return 1; }
	rm -rf "$2"
}

# up_forget PRODUCT drops PRODUCT's line from $WORK/up.
up_forget() {
	[[ -s "$WORK/up" ]] || return 0
	awk -v p="$1" '$1 != p' "$WORK/up" >"$WORK/up.tmp"
	mv "$WORK/up.tmp" "$WORK/up"
}

# up_state PRODUCT prints PRODUCT's state directory when it is up.
up_state() {
	[[ -s "$WORK/up" ]] || return 0
	awk -v p="$1" '$1 == p { print $2 }' "$WORK/up"
}

# after_failure PRODUCT RC: when run_product died before writing its meta or
# stopping the product, do both here. The product is out of the later rounds.
after_failure() {
	local p="$1" rc="$2" state
	touch "$WORK/out-$p"
	state="$(up_state "$p")"
	if [[ -n "$state" ]]; then
		phase_step teardown "$p" "$p meta + down after it stopped unexpectedly"
		jq -e '.status == "na"' "$RUN_DIR/$p/meta.json" >/dev/null 2>&1 ||
			product_meta "$p" "$state" "" na "the run of $p stopped unexpectedly (exit $rc)" || true
		product_down "$p" "$state" || true
	elif [[ ! -s "$RUN_DIR/$p/meta.json" ]]; then
		na_meta "$p" "" "the run of $p stopped unexpectedly (exit $rc)" "$RUN_DIR/$p/meta.json"
	fi
}

# phase_step KIND PRODUCT NAME... ends the running phase (its record to
# RUN_DIR/phases.jsonl) and begins NAME of KIND for PRODUCT ("" = run-wide); no
# arguments: only ends it. The running phase lives in WORK/phase (aggregate
# phase --running), so one begun in run_product's subshell is ended by the main
# shell. Never fatal: cleanup calls it before it stops anything.
phase_step() {
	local args=() took=""
	(($# == 0)) || args=(--kind "$1" --product "$2" --name "${*:3}")
	[[ -z "${SESSION_START:-}" ]] || args+=(--start "$SESSION_START")
	if [[ ! -x "$IDPBENCH_BIN/aggregate" ]] || ! took="$("$IDPBENCH_BIN/aggregate" phase --running "$WORK/phase" \
		--out "$RUN_DIR/phases.jsonl" --session "$SESSION" "${args[@]}")"; then
		warn "phase not recorded in $RUN_DIR/phases.jsonl"
	fi
	[[ -z "$took" ]] || took=" (after: $took)"
	if (($# == 0)); then
		[[ -z "$took" ]] || log "==$took"
	else
		log "== ${*:3}$took"
		SESSION_START=""
	fi
}

main() {
	local only="" fresh=0 run_id="" p
	# This session's id and start: its phases (phase_step) are its own.
	SESSION_START="$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"
	SESSION="$(date -u +%Y%m%dT%H%M%SZ)-$$"
	QUICK=()
	while (($# > 0)); do
		case "$1" in
		--quick) QUICK=(--quick) ;;
		--fresh) fresh=1 ;;
		--only) only="$2" && shift ;;
		--run-id) run_id="$2" && shift ;;
		--repeats) export IDPBENCH_REPEATS="$2" && shift ;;
		--driver-cpus) export IDPBENCH_DRIVER_CPUS="${2:-}" && shift ;;
		--server-cpus) export IDPBENCH_SERVER_CPUS="${2:-}" && shift ;;
		--no-pin) export IDPBENCH_PIN=0 ;;
		--full-ladder) export IDPBENCH_FULL_LADDER=1 ;;
		-h | --help) usage ;;
		*) log "unknown argument $1" && usage ;;
		esac
		shift
	done
	local products=("${DEFAULT_PRODUCTS[@]}")
	[[ -n "$only" ]] && IFS=, read -r -a products <<<"$only"
	if ((${#QUICK[@]})); then
		PROFILE=quick
		run_id="${run_id:-quick}"
		LADDER_LEN="$(wc -w <<<"${IDPBENCH_LADDER:-2 8 32}")"
	else
		PROFILE=full
		run_id="${run_id:-full-$(date +%Y%m%d)}"
		LADDER_LEN="$(wc -w <<<"${IDPBENCH_LADDER:-2 4 8 16 32 64 128}")"
		# Every steady cell from >= 3 windows spread over the run.
		export IDPBENCH_REPEATS="${IDPBENCH_REPEATS:-3}"
	fi
	[[ "$run_id" =~ ^[A-Za-z0-9._-]+$ ]] || { log "bad run id: $run_id"; usage; }
	[[ "${IDPBENCH_REPEATS:-1}" =~ ^[1-9][0-9]*$ ]] || { log "--repeats (IDPBENCH_REPEATS) ${IDPBENCH_REPEATS}: want a whole number >= 1"; usage; }
	require_cmd jq curl python3 go flock
	# The tools before the placement, which provision checks: a bad one
	# exits 2 before anything of the run is touched.
	if [[ -n "${IDPBENCH_NO_BUILD:-}" ]]; then
		log "IDPBENCH_NO_BUILD set: using the tools already in $IDPBENCH_BIN"
	else
		build_tools
	fi
	placement_init
	# At most: round 1 measures the whole ladder, every later round at most
	# 3 candidate levels (scripts/ladder.sh).
	LADDER_LEN=$((LADDER_LEN + (${IDPBENCH_REPEATS:-1} - 1) * (LADDER_LEN < 3 ? LADDER_LEN : 3)))
	# Only the cluster this session starts is ever stopped (pg_down in cleanup).
	unset IDPBENCH_PG_DIR
	local results="${IDPBENCH_RESULTS:-$IDPBENCH_ROOT/results}"
	mkdir -p "$results"
	results="$(cd "$results" && pwd -P)"
	RUN_DIR="$results/$run_id"
	export RUN_DIR

	trap cleanup EXIT
	trap 'exit 130' INT TERM
	local state
	state="$(run_state_dir "$run_id" "$RUN_DIR")"
	"$(tool runstate)" claim --owner "$$" "$state"
	WORK="$state"
	"$(tool runstate)" clean --run-dir "$RUN_DIR" "$WORK"
	mkdir -p "$WORK/pids" "$WORK/tmp"
	# Every scratch directory of the run's tools and adapters lives in its state.
	local tmp_parent="$IDPBENCH_TMP"
	export IDPBENCH_TMP="$WORK/tmp"
	if ((fresh)) && [[ -d "$RUN_DIR" ]]; then
		log "--fresh: deleting $RUN_DIR"
		rm -rf "$RUN_DIR"
	fi
	mkdir -p "$RUN_DIR"
	STEP=0
	# Load steps, at most: every ladder window, plus one GC-jitter step per product.
	STEP_TOTAL=$((${#products[@]} * (${#SCENARIOS[@]} * LADDER_LEN + 1)))
	log "run $run_id ($PROFILE): products ${products[*]}; scenarios ${SCENARIOS[*]}; at most $STEP_TOTAL load steps; results in $RUN_DIR"

	# The build (above) is the session's first phase: a session's first phase
	# begins when the session did (phase_step).
	[[ -n "${IDPBENCH_NO_BUILD:-}" ]] || phase_step build "" "build tools"
	phase_step database "" "PostgreSQL up"
	# Outside the state directory (0700, this user's): the server runs as its own OS user.
	local pg_dir
	pg_dir="$(IDPBENCH_TMP="$tmp_parent" pg_make_dir)"
	echo "$pg_dir" >>"$WORK/tmpdirs"
	pg_up "$pg_dir"
	write_pidfile "$WORK/pids/postgres.pid" "$(head -n1 "$pg_dir/data/postmaster.pid")"

	local t0 rc round rounds="${IDPBENCH_REPEATS:-1}"
	for p in "${products[@]}"; do
		[[ "$p" =~ ^[a-z0-9_-]+$ ]] || die "bad product name: $p"
	done
	# Round by round: round 1 of every product, then round 2 of every product,
	# and so on (run_product).
	for ((round = 1; round <= rounds; round++)); do
		for p in "${products[@]}"; do
			[[ ! -e "$WORK/out-$p" ]] || continue
			t0=$SECONDS
			# A subshell with errexit on (a function called as a condition would
			# run with errexit off): any unchecked failure ends this product only.
			set +e
			(
				set -e
				run_product "$p" "$round"
			)
			rc=$?
			set -e
			((rc == 130)) && exit 130
			if ((rc != 0)); then
				FAILED=1
				after_failure "$p" "$rc"
			fi
			log "$p: round $round/$rounds done in $((SECONDS - t0)) s"
			# run_product counted its steps in a subshell.
			STEP="$(cat "$WORK/step" 2>/dev/null || echo "$STEP")"
		done
	done

	phase_step database "" "PostgreSQL down"
	pg_down
	phase_step report "" "aggregate report"
	local aggregate
	aggregate="$(tool aggregate)"
	"$aggregate" report "$RUN_DIR" -o "$RUN_DIR/COMPARISON.md"
	ln -sfn "$run_id" "$results/latest"
	log "report: $RUN_DIR/COMPARISON.md (results/latest -> $run_id); run took $SECONDS s"
	((FAILED == 0)) || { log "some products failed; see their meta.json"; exit 1; }
}

main "$@"
