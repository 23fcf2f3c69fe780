#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target of idpbench, one at a time.
#
#   scripts/fuzz.sh [--time D] [--list] [TARGET...]
#
#   --time D   how long each target fuzzes, as go test -fuzztime takes it
#              (3s, 5m, or a count of inputs such as 10000x); default 3s
#   --list     print the targets found (package, name) and exit
#   TARGET     fuzz only these (e.g. FuzzResponse); default every target
#
# The targets are found, not listed here: every `func FuzzXxx(` in a
# *_test.go file of the repository, so a new one is never left out. Each
# runs on its own as
#   go test -run '^$' -fuzz '^FuzzXxx$' -fuzztime D -parallel 1 ./pkg
# (one worker: the machine's cores are shared). Every target runs, and the
# script fails at the end naming those that failed.
#
# A failing input is written by go under the package's testdata/fuzz/FuzzXxx/
# and kept there: commit it with the fix, and plain `go test` runs it as a
# regression seed from then on. Inputs that only widen coverage stay in go's
# cache ($(go env GOCACHE)/fuzz), out of the repository.
#
# Exit codes: 0 every target passed, 1 one failed (named at the end), 2 a bad argument.
#
#   scripts/fuzz.sh --time 5m              # the long run: about 5 minutes a target
#   scripts/fuzz.sh --time 1m FuzzMember   # one target
#
# Rules and records: docs/design.md#the-scripts.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=fuzz

FUZZTIME=3s
LIST=0
WANT=()
while (($#)); do
	case "$1" in
	--time)
		[[ $# -ge 2 && -n "$2" ]] || usage_error "--time needs a duration (3s, 5m, 10000x)"
		FUZZTIME="$2"
		shift
		;;
	--time=*) FUZZTIME="${1#--time=}" ;;
	--list) LIST=1 ;;
	-h | --help)
		script_help
		exit 0
		;;
	-*) usage_error "unknown option: $1 (see --help)" ;;
	*) WANT+=("$1") ;;
	esac
	shift
done

require_cmd go
cd "$IDPBENCH_ROOT"

# targets prints "./pkg FuzzXxx" for every fuzz target, sorted.
targets() {
	grep -rHo --include='*_test.go' --exclude-dir=.git -E '^func Fuzz[A-Za-z0-9_]*\(' . |
		sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($#\1 \2#' | sort -u
}

mapfile -t all < <(targets)
((${#all[@]} > 0)) || die "no fuzz targets (func Fuzz... in *_test.go) under $IDPBENCH_ROOT"
if ((LIST)); then
	printf '%s\n' "${all[@]}"
	exit 0
fi

run=()
if ((${#WANT[@]})); then
	for w in "${WANT[@]}"; do
		found=0
		for t in "${all[@]}"; do
			if [[ "${t#* }" == "$w" ]]; then
				run+=("$t")
				found=1
			fi
		done
		((found)) || usage_error "no fuzz target $w (see --list)"
	done
else
	run=("${all[@]}")
fi

# deadline_race OUT: the run failed only by go's own race at the end of a
# timed -fuzztime (golang/go#75804, unfixed in Go 1.26): a bare "context
# deadline exceeded", no input written, no seed failing. It says nothing of
# the target, and it comes when the machine is busy.
deadline_race() {
	grep -qx $'\tcontext deadline exceeded\|    context deadline exceeded' "$1" &&
		! grep -q 'Failing input written' "$1" && ! grep -q -- '--- FAIL: Fuzz[A-Za-z0-9_]*/' "$1"
}

OUT="$(mktemp)"
trap 'rm -f "$OUT"' EXIT
failed=()
i=0
for t in "${run[@]}"; do
	pkg="${t% *}" name="${t#* }"
	step $((++i)) "${#run[@]}" "$name in $pkg for $FUZZTIME"
	if go test -run '^$' -fuzz "^$name\$" -fuzztime "$FUZZTIME" -parallel 1 "$pkg" 2>&1 | tee "$OUT"; then
		continue
	elif deadline_race "$OUT"; then
		warn "$name: only go's end-of-fuzztime race (golang/go#75804), no failing input: not a finding"
	else
		failed+=("$name ($pkg)")
	fi
done
((${#failed[@]} == 0)) || die "fuzz targets failed: ${failed[*]}; their inputs are under testdata/fuzz/ of each package"
log "all ${#run[@]} fuzz targets passed ($FUZZTIME each)"
