#!/usr/bin/env bash
# test-rounds.sh: proves that run-comparison.sh interleaves its rounds across
# products (round r of every product before round r+1 of any).
#
#   scripts/test-rounds.sh
#
# A real run of two products, the reference OP (refop) and the generic
# adapter on its own reference OP (oidc, examples/oidc/refop.env on a free
# port), with
# --repeats 2: the discovery ladder at c=2 only, 2 s windows. Then, from the
# results alone: each product's two windows of discovery c=2 (-c2.json and
# -c2-r2.json) began in the order refop 1, oidc 1, refop 2, oidc 2; each
# meta.json records rounds {count 2, order interleaved}; COMPARISON.md says
# so; and neither product was started again once the other had begun its
# round: it stayed up, idle, between its rounds.
# Takes about a minute. Needs jq, PostgreSQL (installed when missing and run
# as root) and the reference OP (built on first use).
#
# Environment: IDPBENCH_NO_BUILD=1 uses the tools already in IDPBENCH_BIN.
# Exit 0 only when every check passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=test-rounds

case "${1:-}" in
"") ;;
-h | --help) script_help && exit 0 ;;
*) script_help && exit 2 ;;
esac

test_scratch
require_cmd jq
WORK="$(make_tmpdir idpbench-rounds)"
WORK="$(cd "$WORK" && pwd -P)"
chmod 711 "$WORK" # the run's PostgreSQL directory is made in WORK, and its server runs as its own OS user
if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi
results="$WORK/results" run="$WORK/results/rounds"

step 1 2 "a run of refop and oidc in 2 rounds"
# The example configuration on a free port (its own is fixed: 19998).
cp -r "$IDPBENCH_ROOT/examples/oidc" "$WORK/oidc"
port="$(free_port)"
sed -i "s/19998/$port/g" "$WORK/oidc/refop.env"
IDPBENCH_OIDC_CONFIG="$WORK/oidc/refop.env" IDPBENCH_TMP="$WORK" IDPBENCH_RESULTS="$results" IDPBENCH_NO_BUILD=1 IDPBENCH_SCENARIOS=discovery \
	IDPBENCH_LADDER=2 IDPBENCH_WARMUP_S=1 IDPBENCH_DURATION_S=2 IDPBENCH_GCJITTER_S=2 \
	"$IDPBENCH_ROOT/scripts/run-comparison.sh" --quick --only refop,oidc --repeats 2 --run-id rounds >"$WORK/run.log" 2>&1 ||
	die "run-comparison.sh failed; its errors and N/A reasons: $(grep -h ' error: \|"na_reason"' "$WORK/run.log" "$run"/*/meta.json 2>/dev/null | head -n 5)"

step 2 2 "the windows' order, the metas, the report, each product up between its rounds"
order="$(for f in "$run"/{refop,oidc}/discovery-c2{,-r2}.json; do
	[[ -s "$f" ]] || die "no step $f (log: $WORK/run.log)"
	jq -r --arg f "${f#"$run"/}" '"\(.start) \($f)"' "$f"
done | sort | cut -d' ' -f2 | paste -sd' ')"
want="refop/discovery-c2.json oidc/discovery-c2.json refop/discovery-c2-r2.json oidc/discovery-c2-r2.json"
[[ "$order" == "$want" ]] || die "the windows began in the order $order; want $want"
log "ok: windows in the order $order"
for p in refop oidc; do
	jq -e '.status == "ok" and .rounds == {count: 2, order: "interleaved"}' "$run/$p/meta.json" >/dev/null ||
		die "$p meta.json: want status ok and rounds {count 2, order interleaved}, got $(jq -c '{status, na_reason, rounds}' "$run/$p/meta.json")"
done
# starts_after TAG LINE counts the starts logged by TAG (an adapter's log tag,
# its product name) after the first line holding LINE.
starts_after() {
	awk -v p="$1: " -v from="$2" 'index($0, from) { on = 1 } on && index($0, p) && / start: ready in / { n++ } END { print n + 0 }' "$WORK/run.log"
}
# While the other product runs, each stays up: no start of it from then on
# (the generic adapter logs as its NAME, oidc:refop).
for pair in "refop|== oidc ladder discovery (round 1/2)" "oidc:refop|== refop ladder discovery (round 2/2)"; do
	p="${pair%%|*}" from="${pair#*|}"
	grep -qF -- "$from" "$WORK/run.log" || die "no line \"$from\" in the run's log ($WORK/run.log)"
	n="$(starts_after "$p" "$from")"
	((n == 0)) || die "$p was started $n times from \"$from\" on: want it up and idle between its rounds (log: $WORK/run.log)"
done
grep -qF -- "- Rounds: 2, interleaved with the other products'" "$run/COMPARISON.md" ||
	die "COMPARISON.md: no line \"- Rounds: 2, interleaved ...\""
log "ok: both metas record 2 interleaved rounds, the report says so, each product stayed up between its rounds"
log "rounds: all checks passed"
