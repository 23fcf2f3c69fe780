#!/usr/bin/env bash
# test-placement.sh: proves run-comparison.sh's placement (--driver-cpus,
# --server-cpus) on real processes, and its validation.
#
#   scripts/test-placement.sh
#
# 1. validation: overlapping sets, a CPU this process may not use, one flag
#    without the other, a malformed list, --no-pin with sets: each exits 2
#    naming the flag; the default is shared below 4 CPUs (this host's
#    placement_init) and a quarter of the CPUs, the highest, for the driver
#    from 4 on (placement_default on 4 and 8 CPUs)
# 2. compose mode (no Docker engine here: the rendered file only): with a
#    server set, every service of the product's compose file gets it as
#    cpuset in STATE/compose.placement.yml, which every compose command adds
# 3. a real run pinned apart: run-comparison.sh --only refop, the discovery
#    ladder at c=2 and a short GC-jitter run, with the second CPU this
#    process may use for the driver and the first for the server. While it
#    runs, /proc/PID/status Cpus_allowed_list of every process of the
#    reference OP's process group and its descendants, of PostgreSQL's
#    postmaster and its children (a client backend held open by psql
#    among them), of the sampler and of every loadstep and mintpool the run
#    starts must be the set of its side; each must have been seen. Then its
#    meta.json's placement and the report's placement line.
# Takes about 30 s. Needs 2 CPUs, taskset, jq, PostgreSQL (installed when
# missing and run as root) and the reference OP (built on first use).
#
# Environment: IDPBENCH_NO_BUILD=1 uses the tools already in IDPBENCH_BIN.
# Exit 0 only when every check passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.sh"
export IDPBENCH_LOG_TAG=test-placement

case "${1:-}" in
"") ;;
-h | --help) script_help && exit 0 ;;
*) script_help && exit 2 ;;
esac

test_scratch
require_cmd taskset jq python3
read -r -a CPUS < <(cpu_list_expand "$(cpus_allowed)" | head -n2 | paste -sd' ')
((${#CPUS[@]} == 2)) || die "needs 2 CPUs to pin the driver and the server apart, has ${#CPUS[@]}"
SERVER="${CPUS[0]}" DRIVER="${CPUS[1]}"
WORK="$(make_tmpdir idpbench-placement)"
WORK="$(cd "$WORK" && pwd -P)"
# The run's PostgreSQL directory is made in WORK, and its server runs as its own OS user.
chmod 711 "$WORK"
RUN="$IDPBENCH_ROOT/scripts/run-comparison.sh"
TOTAL=4

step 1 "$TOTAL" "validation: each bad placement exits 2 naming its flag"
# refused WANT_REGEX ARGS...: run-comparison.sh ARGS exits 2 saying WANT_REGEX.
refused() {
	local want="$1" out rc=0
	shift
	out="$(env -u IDPBENCH_DRIVER_CPUS -u IDPBENCH_SERVER_CPUS -u IDPBENCH_PIN "$RUN" "$@" 2>&1)" || rc=$?
	if ((rc != 2)) || ! grep -Eq -- "$want" <<<"$out"; then
		die "run-comparison.sh $*: want exit 2 saying /$want/, got exit $rc: $out"
	fi
	log "ok: $* -> exit 2: $(grep -E -- "$want" <<<"$out" | head -n1 | sed 's/^.*error: //')"
}
outside=$(($(cpu_list_expand "$(cpus_allowed)" | tail -n1) + 1))
refused "--driver-cpus \($DRIVER\) and --server-cpus \($SERVER,$DRIVER\) overlap on CPUs $DRIVER" \
	--driver-cpus "$DRIVER" --server-cpus "$SERVER,$DRIVER"
refused "--driver-cpus \(IDPBENCH_DRIVER_CPUS\) \"$outside\": CPU $outside is not one this process may use" \
	--driver-cpus "$outside" --server-cpus "$SERVER"
refused "--server-cpus \(IDPBENCH_SERVER_CPUS\) \"$SERVER,$outside\": CPU $outside is not one" \
	--driver-cpus "$DRIVER" --server-cpus "$SERVER,$outside"
refused "--driver-cpus .* needs --server-cpus" --driver-cpus "$DRIVER"
refused "--server-cpus .* needs --driver-cpus" --server-cpus "$SERVER"
refused "--driver-cpus .*\"1-0\": not a CPU list" --driver-cpus 1-0 --server-cpus "$SERVER"
refused "--no-pin .* contradict" --no-pin --driver-cpus "$DRIVER" --server-cpus "$SERVER"
# default ALLOWED WANT: placement_default's "DRIVER SERVER" for a host of ALLOWED.
default() {
	[[ "$(placement_default "$1")" == "$2" ]] || die "default placement on CPUs $1: want \"$2\", got \"$(placement_default "$1")\""
	log "ok: default placement on CPUs $1: ${2:-shared}"
}
default 0-7 "6-7 0-5"
default 0-3 "3 0-2"
default 0-2 ""
# shellcheck disable=SC2016 # expanded by the inner bash
here="$(env -u IDPBENCH_DRIVER_CPUS -u IDPBENCH_SERVER_CPUS -u IDPBENCH_PIN bash -c \
	'source "$1/scripts/lib/common.sh"; placement_init 2>/dev/null; placement_args' _ "$IDPBENCH_ROOT" | paste -sd' ')"
if (($(nproc) < 4)); then
	[[ "$here" == "--placement-mode shared "*" --placement-reason $(nproc) CPUs: fewer than 4"* ]] ||
		die "default placement on this $(nproc)-CPU host: want shared, fewer than 4, got $here"
	log "ok: default on this host: $here"
fi

step 2 "$TOTAL" "compose mode: the rendered placement override"
compose_check() {
	local st="$WORK/compose-state" yml
	mkdir -p "$st/secrets"
	yml="$IDPBENCH_ROOT/deploy/compose/compose.hydra.yml"
	printf 'COMPOSE_FILE=%q\n' "$yml" >"$st/state.env"
	# shellcheck source=SCRIPTDIR/lib/adapter.sh
	(source "$IDPBENCH_ROOT/scripts/lib/adapter.sh" && IDPBENCH_SERVER_CPUS="$SERVER" compose_placement "$st" &&
		compose_override_args "$st" >"$st/args")
	[[ "$(paste -sd' ' "$st/args")" == "-f $st/compose.placement.yml" ]] ||
		die "compose: want the override added to the compose commands, got $(cat "$st/args")"
	printf 'services:\n  postgres:\n    cpuset: "%s"\n  hydra-migrate:\n    cpuset: "%s"\n  hydra:\n    cpuset: "%s"\n' \
		"$SERVER" "$SERVER" "$SERVER" >"$st/want"
	diff <(grep -v '^#' "$st/compose.placement.yml") "$st/want" >&2 ||
		die "compose: $st/compose.placement.yml does not give every service of $(basename "$yml") cpuset $SERVER"
	(source "$IDPBENCH_ROOT/scripts/lib/adapter.sh" && IDPBENCH_SERVER_CPUS="" compose_placement "$st")
	[[ ! -e "$st/compose.placement.yml" ]] || die "compose: an override was written without a server set"
	log "ok: compose: every service of $(basename "$yml") gets cpuset \"$SERVER\"; none without a server set"
}
compose_check

step 3 "$TOTAL" "a real run: the reference OP and PostgreSQL on CPU $SERVER, the load generator and the sampler on CPU $DRIVER"
if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi
results="$WORK/results"
STATE="$(IDPBENCH_TMP="$WORK" run_state_dir placement "$results/placement")"
IDPBENCH_TMP="$WORK" IDPBENCH_RESULTS="$results" IDPBENCH_NO_BUILD=1 IDPBENCH_SCENARIOS=discovery \
	IDPBENCH_LADDER=2 IDPBENCH_WARMUP_S=1 IDPBENCH_DURATION_S=4 IDPBENCH_GCJITTER_S=3 IDPBENCH_REUSE_POOL=8 \
	test_run_bg run "$RUN" --quick --only refop --run-id placement --driver-cpus "$DRIVER" --server-cpus "$SERVER"
run_pid="$(head -n1 "$WORK/run.pid")"

declare -A SEEN=()
# affinity WHAT PID WANT: PID's Cpus_allowed_list is WANT (a process gone
# since it was listed is skipped).
affinity() {
	local got
	got="$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$2/status" 2>/dev/null)" || return 0
	[[ -n "$got" ]] || return 0
	[[ "$got" == "$3" ]] || die "$1 (pid $2, $(tr '\0' ' ' <"/proc/$2/cmdline" | cut -c1-80)): Cpus_allowed_list $got, want $3"
	[[ -n "${SEEN[$1]:-}" ]] || log "ok: $1 (pid $2) on CPUs $got"
	SEEN[$1]=1
}
# descendants PID... prints every descendant of the PIDs.
descendants() {
	local p c
	for p in "$@"; do
		for c in $(pgrep -P "$p" || true); do
			echo "$c"
			descendants "$c"
		done
	done
}
pidfile_pid() { [[ -s "$1" ]] && head -n1 "$1"; }

PSQL_STARTED=0 p="" pm="" pg="" BACKEND="a PostgreSQL client backend"
while running "$run_pid"; do
	for p in $(descendants "$run_pid"); do
		case "$(cat "/proc/$p/comm" 2>/dev/null)" in
		loadstep) affinity loadstep "$p" "$DRIVER" ;;
		mintpool) affinity mintpool "$p" "$DRIVER" ;;
		esac
	done
	if p="$(pidfile_pid "$STATE/pids/sampler.pid")"; then affinity sampler "$p" "$DRIVER"; fi
	if p="$(pidfile_pid "$STATE/refop/pids/refop.pid")"; then
		for c in $(group_members "$p"); do affinity "the reference OP's process tree" "$c" "$SERVER"; done
		for c in $(descendants "$p"); do affinity "the reference OP's process tree" "$c" "$SERVER"; done
	fi
	if pm="$(pidfile_pid "$STATE/pids/postgres.pid")"; then
		affinity "PostgreSQL's postmaster" "$pm" "$SERVER"
		for c in $(pgrep -P "$pm" || true); do affinity "a PostgreSQL child of the postmaster" "$c" "$SERVER"; done
		pg="$(dirname "$(readlink "/proc/$pm/cwd" 2>/dev/null || echo /x/y)")" # the postmaster runs in PG_DIR/data
		if ((!PSQL_STARTED)) && [[ -s "$pg/pg.env" ]]; then
			# A client backend to look at: a session held open for the run.
			# shellcheck disable=SC2016 # expanded by the inner bash
			IDPBENCH_PG_DIR="$pg" test_run_bg psql bash -c 'source "$1/scripts/lib/common.sh"; source "$1/scripts/lib/postgres.sh"; pg_psql postgres -c "SELECT pg_sleep(60) /* idpbench-placement */"' _ "$IDPBENCH_ROOT"
			PSQL_STARTED=1
		fi
		if ((PSQL_STARTED)) && [[ -z "${SEEN[$BACKEND]:-}" ]]; then
			for c in $(IDPBENCH_PG_DIR="$pg" pg_psql postgres -At -c "SELECT pid FROM pg_stat_activity WHERE query LIKE '%idpbench-placement */' AND pid <> pg_backend_pid()" 2>/dev/null || true); do
				affinity "$BACKEND" "$c" "$SERVER"
			done
		fi
	fi
	sleep 0.2
done
rc=0
wait "$run_pid" || rc=$?
((rc == 0)) || die "run-comparison.sh exited $rc (log: $WORK/run.log): $(tail -n 5 "$WORK/run.log")"
for what in loadstep sampler "the reference OP's process tree" "PostgreSQL's postmaster" \
	"a PostgreSQL child of the postmaster" "$BACKEND"; do
	[[ -n "${SEEN[$what]:-}" ]] || die "$what was never seen while the run ran (log: $WORK/run.log)"
done
log "ok: every process looked at ran on its side's CPUs"

step 4 "$TOTAL" "the meta's placement and the report's line"
meta="$results/placement/refop/meta.json"
jq -e --arg d "$DRIVER" --arg s "$SERVER" --argjson n "$(nproc)" \
	'.placement == {mode: "pinned", driver_cpus: $d, server_cpus: $s, host_cpus: $n}' "$meta" >/dev/null ||
	die "refop meta.json: want placement pinned driver $DRIVER server $SERVER, got $(jq -c '.placement' "$meta")"
line="- Placement: load generator and sampler on CPUs $DRIVER, product and PostgreSQL on CPUs $SERVER (pinned; $(nproc) CPUs)"
grep -qxF -- "$line" "$results/placement/COMPARISON.md" || die "COMPARISON.md: no line \"$line\""
log "ok: meta.json placement $(jq -c .placement "$meta"); the report says so"
log "placement: all checks passed"
