#!/usr/bin/env bash
# test-killrun.sh: a run killed with kill -9 leaves nothing behind once it is
# run again (scripts/run-comparison.sh's state directory and its cleaning).
#
#   scripts/test-killrun.sh
#
# 1. starts a real run (--quick --only refop, IDPBENCH_SCENARIOS=discovery,
#    IDPBENCH_LADDER="2 8", IDPBENCH_GCJITTER_S=5, IDPBENCH_REUSE_POOL=16) in its own process group
#    (setsid) and waits until a ladder step is in progress: the reference OP
#    and PostgreSQL up, loadstep's temp file in the run directory
# 2. the same command again while the first runs must refuse (exit 1, "held by
#    a live session") and leave the first running
# 3. kill -9 of the first run's whole process group; the reference OP and
#    PostgreSQL (process groups of their own) must still run, and the temp
#    file must still be there, or there is nothing to test
# 4. the server's recorded pid is deleted from the run's state, as when a
#    session is killed while PostgreSQL starts: the rerun must find the server
#    by its directory; and a decoy: a live `sleep` recorded in the run's
#    state with a wrong start time
# 5. the same command again: exit 0 with a COMPARISON.md, the first run's
#    reference OP and PostgreSQL stopped (their recorded pids gone, their
#    ports free), no directory of the first run left (its state, PostgreSQL's
#    directory: the runs' IDPBENCH_TMP is empty), no .NAME.tmp-* or NAME.tmp
#    file in the run directory, each of those named in a "cleaned:" line of
#    the rerun's log, and the decoy left alone (still running)
# Takes under a minute. Needs the reference OP (installed and cached by its
# adapter), PostgreSQL, jq, curl, python3, setsid, flock.
#
# Environment: IDPBENCH_NO_BUILD=1 uses the tools already in IDPBENCH_BIN.
# Exit 0 only when every check passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=killrun

usage() {
	script_help
	exit 2
}
(($# == 0)) || usage

WORK=""
FIRST=""
cleanup() {
	local rc=$? f
	trap - EXIT INT TERM
	# A first run still going (a check failed before the kill) stops itself on TERM.
	if [[ -n "$FIRST" ]] && running "$FIRST"; then
		kill -TERM -- "-$FIRST" 2>/dev/null || true
		wait_gone "$FIRST" 60 || kill -KILL -- "-$FIRST" 2>/dev/null || true
	fi
	if [[ -n "$WORK" ]]; then
		# The decoy, and what a failed check left: each only while its identity matches.
		for f in "$WORK"/kept/*.pid; do
			[[ -e "$f" ]] && { stop_leftover "$f" || rc=1; }
		done
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_gone PID TIMEOUT_S succeeds once PID has ended.
wait_gone() {
	local deadline=$((SECONDS + $2))
	while running "$1"; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
}

require_cmd jq curl python3 setsid flock
WORK="$(make_tmpdir idpbench-killrun)"
mkdir -p "$WORK/kept" "$WORK/tmp" "$WORK/results"
# PostgreSQL's directory (under the runs' IDPBENCH_TMP) is reached by the server's own OS user.
chmod 711 "$WORK" "$WORK/tmp"
if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi
"$IDPBENCH_ROOT/scripts/products/refop" install

export IDPBENCH_NO_BUILD=1 IDPBENCH_TMP="$WORK/tmp" IDPBENCH_RESULTS="$WORK/results"
export IDPBENCH_SCENARIOS=discovery IDPBENCH_LADDER="2 8" IDPBENCH_GCJITTER_S=5 IDPBENCH_REUSE_POOL=16
unset IDPBENCH_PG_DIR
RUN=(--quick --only refop --run-id killrun)
run_dir="$(cd "$IDPBENCH_RESULTS" && pwd -P)/killrun"
STATE="$(run_state_dir killrun "$run_dir")"

TOTAL=5 N=0
next() { N=$((N + 1)) && step "$N" "$TOTAL" "$@"; }

# state_value FILE KEY prints KEY of a KEY=value file (state.env, pg.env).
# shellcheck disable=SC1090 # the file is a run's state
state_value() { (source "$1" && printf '%s\n' "${!2}"); }

next "a real run in its own process group, until a ladder step is in progress"
setsid "$IDPBENCH_ROOT/scripts/run-comparison.sh" "${RUN[@]}" >"$WORK/first.log" 2>&1 &
FIRST=$!
# setsid makes the job lead a group of its own when it execs: wait for that.
for ((i = 0; i < 50; i++)); do
	[[ "$(ps -o pgid= -p "$FIRST" | tr -d ' ')" == "$FIRST" ]] && break
	sleep 0.1
done
[[ "$(ps -o pgid= -p "$FIRST" | tr -d ' ')" == "$FIRST" ]] || die "the first run does not lead its own process group"
deadline=$((SECONDS + 120))
until [[ -s "$STATE/refop/pids/refop.pid" && -s "$STATE/pids/postgres.pid" ]] &&
	compgen -G "$run_dir/refop/.discovery-c*.json.tmp-*" >/dev/null; do
	running "$FIRST" || die "the first run ended before a ladder step was in progress; its log: $(tail -n 20 "$WORK/first.log")"
	((SECONDS < deadline)) || die "no ladder step in progress after 120 s; the first run's log: $(tail -n 20 "$WORK/first.log")"
	sleep 0.1
done
cp "$STATE/refop/pids/refop.pid" "$STATE/pids/postgres.pid" "$WORK/kept/"
REFOP_PID="$(head -n1 "$WORK/kept/refop.pid")" PG_PID="$(head -n1 "$WORK/kept/postgres.pid")"
PG_DIR="$(head -n1 "$STATE/tmpdirs")"
REFOP_PORT="$(state_value "$STATE/refop/state.env" REFOP_PORT)" PG_PORT="$(state_value "$PG_DIR/pg.env" PG_PORT)"
log "in progress: $(basename "$(compgen -G "$run_dir/refop/.discovery-c*.json.tmp-*" | head -n1)"); reference OP pid $REFOP_PID port $REFOP_PORT, PostgreSQL pid $PG_PID port $PG_PORT"

next "the same command while the first runs: refused"
rc=0
"$IDPBENCH_ROOT/scripts/run-comparison.sh" "${RUN[@]}" >/dev/null 2>"$WORK/concurrent.log" || rc=$?
if ! { ((rc == 1)) && grep -q "held by a live session (pid $FIRST)" "$WORK/concurrent.log"; }; then
	die "a second session of the run: want exit 1 naming the live one (pid $FIRST), got exit $rc: $(cat "$WORK/concurrent.log")"
fi
if ! { running "$FIRST" && pidfile_current "$WORK/kept/refop.pid" && pidfile_current "$WORK/kept/postgres.pid"; }; then
	die "the refused session disturbed the first run"
fi
log "ok: refused: $(grep -o 'error: .*' "$WORK/concurrent.log")"

next "kill -9 of the first run's process group ($FIRST)"
kill -KILL -- "-$FIRST"
wait "$FIRST" || true
FIRST=""
if ! { pidfile_current "$WORK/kept/refop.pid" && pidfile_current "$WORK/kept/postgres.pid"; }; then
	die "the reference OP and PostgreSQL did not outlive the kill: nothing to clean, nothing tested"
fi
mapfile -t STALE < <(find "$run_dir" -type f -name '.*.tmp-*')
((${#STALE[@]} > 0)) || die "no temp file of the killed step left: nothing to clean, nothing tested"
log "left by the kill: reference OP pid $REFOP_PID, PostgreSQL pid $PG_PID, $(du -sh "$STATE" | cut -f1) in $STATE, ${STALE[*]}"

next "PostgreSQL's recorded pid deleted; a decoy: a live sleep recorded with a wrong start time"
rm "$STATE/pids/postgres.pid"
sleep 600 &
DECOY=$!
read -r start boot < <(proc_identity "$DECOY")
printf '%s\n%s %s\n' "$DECOY" "$((start + 1))" "$boot" >"$STATE/pids/decoy.pid"
write_pidfile "$WORK/kept/decoy.pid" "$DECOY"

next "the same command again"
"$IDPBENCH_ROOT/scripts/run-comparison.sh" "${RUN[@]}" 2>&1 | tee "$WORK/second.log" >&2 ||
	die "the rerun failed (exit ${PIPESTATUS[0]})"
# cleaned WHAT: the rerun's log has a "cleaned: WHAT" line.
cleaned() {
	grep -qF "cleaned: $1" "$WORK/second.log" || die "the rerun does not say it $1"
}
for f in refop postgres; do
	! pidfile_current "$WORK/kept/$f.pid" || die "$f (pid $(head -n1 "$WORK/kept/$f.pid")) of the killed run still runs"
done
cleaned "stopped process group $REFOP_PID, refop"
cleaned "found PostgreSQL (pid $PG_PID) by its directory $PG_DIR"
cleaned "stopped process group $PG_PID, postgres"
for p in "$REFOP_PORT" "$PG_PORT"; do port_free "$p" || die "port $p of the killed run is still in use"; done
[[ ! -e "$PG_DIR" ]] || die "PostgreSQL's directory of the killed run is left: $PG_DIR"
cleaned "removed $PG_DIR"
cleaned "removed the earlier session's files in $STATE"
remaining="$(find "$WORK/tmp" -mindepth 1 -maxdepth 1)"
[[ -z "$remaining" ]] || die "temp directories left after the rerun: $remaining"
remaining="$(find "$run_dir" -type f \( -name '.*.tmp-*' -o -name '*.tmp' \))"
[[ -z "$remaining" ]] || die "temp files left in the run directory: $remaining"
for f in "${STALE[@]}"; do cleaned "removed the unfinished write $f"; done
pidfile_current "$WORK/kept/decoy.pid" || die "the decoy (pid $DECOY, wrong start time recorded) was stopped"
cleaned "left pid $DECOY alone"
[[ -s "$run_dir/COMPARISON.md" ]] || die "the rerun wrote no COMPARISON.md"
for c in 2 8; do
	step_complete "$run_dir/refop/discovery-c$c.json" || die "discovery c=$c is not complete after the rerun"
done
jq -e '.status == "ok"' "$run_dir/refop/meta.json" >/dev/null || die "refop's meta after the rerun: $(jq -c '{status, na_reason}' "$run_dir/refop/meta.json")"
log "ok: $(grep -c 'cleaned: ' "$WORK/second.log") things cleaned, the decoy left alone, COMPARISON.md written"
log "kill -9 and rerun: all checks passed"
