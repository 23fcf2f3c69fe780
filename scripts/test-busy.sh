#!/usr/bin/env bash
# test-busy.sh: the Go tests on a machine kept busy, as a shared 2-core CI
# machine is: `go test -race -count=1 -p 1 ./...` N times in a row while a
# busy loop occupies one core. Every run must pass; a timing test that
# judges the machine's scheduler instead of the code fails here.
#
#   scripts/test-busy.sh [--runs N]
#
#   --runs N   runs in a row (default 5)
#
# Prints, per run, pass or fail, its wall time and the load average after
# it; the go test output goes to stdout as well (results/test-busy/ holds a
# committed one).
#
# Exit codes: 0 every run passed, 1 a run failed (it stops there), 2 a bad argument.
#
#   scripts/test-busy.sh --runs 5 2>&1 | tee results/test-busy/"$(git rev-parse --short HEAD)".log
#
# Rules and records: docs/design.md#the-scripts.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=test-busy

RUNS=5
while (($# > 0)); do
	case "$1" in
	--runs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage_error "--runs wants a positive number"; RUNS="$2" && shift ;;
	-h | --help) script_help && exit 0 ;;
	*) usage_error "unknown argument: $1 (see --help)" ;;
	esac
	shift
done
require_cmd go

BUSY=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[[ -n "$BUSY" ]] && kill "$BUSY" 2>/dev/null
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cd "$IDPBENCH_ROOT"
log "commit $(git log --oneline -1 2>/dev/null || echo unknown); load $(cut -d' ' -f1-3 /proc/loadavg)"
(while :; do :; done) &
BUSY=$!
for ((i = 1; i <= RUNS; i++)); do
	t0=$SECONDS
	if go test -race -count=1 -p 1 ./...; then
		log "run $i/$RUNS: pass in $((SECONDS - t0)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
	else
		die "run $i/$RUNS: FAIL after $((SECONDS - t0)) s; load $(cut -d' ' -f1-3 /proc/loadavg)"
	fi
done
log "all $RUNS runs passed beside a busy loop"
