#!/usr/bin/env bash
# sampler-probe.sh: what the run's samplers cost the product they measure.
#
#   scripts/sampler-probe.sh --out DIR [--reps 5] [--rate 22000] [--connections 253]
#   scripts/sampler-probe.sh --out DIR --rate 0 --connections 16    # closed loop
#
# The reference OP's discovery at a fixed rate (loadstep, rate mode, the
# share windows' warmup rule, 5 s windows of 100 ms intervals), in four
# conditions, one window each in turn, --reps times:
#   none  no sampler
#   five  five samplers of the reference OP, each probing the host
#         (the interleaved rounds before the host sampler: a sampler per
#         product up, each with --host-probe)
#   one   five samplers without the probe and one host sampler with it
#         (the run since: startHostSampler in internal/run)
#   quiet five samplers without the probe, no host sampler (what the
#         samplers cost without any probe)
# DIR gets each window's record (w-COND-REP.json), the samplers' records,
# windows.tsv (a line a window: its corrected P50 and P99, its 100 ms
# intervals above 3x the window's median corrected P50) and summary.txt:
# per condition the median P99, the spikes a window, and the geometric-mean
# corrected P50 of the intervals by their phase after the samplers' tick
# (tenths of a second; no phase without samplers). Builds the tools and the
# reference OP (products/refop/adapter install). --rate 0: closed-loop
# windows (the rounds' capacity windows: 5 s after the ladder's warmup
# rule) instead, and the summary gives each condition's median
# throughput and its spread. About 4 minutes with 5
# reps. Committed run: results/sampler-probe.
#
# Exit codes: 0 done, 1 a failure (the reason logged), 2 usage error, 130
# interrupted.
set -o errexit -o nounset -o pipefail
# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=sampler-probe

out="" reps=5 rate=22000 conns=253
while (($#)); do
	case "$1" in
	-h | --help) script_help && exit 0 ;;
	--out) out="${2:?--out needs a directory}" && shift ;;
	--reps) reps="${2:?--reps needs a number}" && shift ;;
	--rate) rate="${2:?--rate needs requests/s}" && shift ;;
	--connections) conns="${2:?--connections needs a number}" && shift ;;
	*) usage_error "unknown argument $1 (--help lists them)" ;;
	esac
	shift
done
[[ -n "$out" ]] || usage_error "--out DIR is required"
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || usage_error "--reps $reps: want a whole number above 0"
[[ "$rate" =~ ^[0-9]+$ ]] || usage_error "--rate $rate: want whole requests/s (0: closed loop)"
[[ "$conns" =~ ^[1-9][0-9]*$ ]] || usage_error "--connections $conns: want a whole number above 0"
require_cmd jq
build_tools
"$IDPBENCH_ROOT/products/refop/adapter" install >&2
refop="$IDPBENCH_CACHE/bin/refop-$("$IDPBENCH_ROOT/products/refop/adapter" version)-idpbench"
mkdir -p "$out"

port="$(free_port)"
# The example logs every request (about 700 MB a run of this script): not kept.
PORT="$port" "$refop" >/dev/null 2>&1 &
refop_pid=$!
samplers=()
stop_samplers() {
	((${#samplers[@]})) || return 0
	kill -INT "${samplers[@]}" 2>/dev/null || true
	wait "${samplers[@]}" 2>/dev/null || true
	samplers=()
}
trap 'stop_samplers; kill "$refop_pid" 2>/dev/null || true' EXIT
url="http://127.0.0.1:$port/.well-known/openid-configuration"
for _ in $(seq 50); do
	if curl -fsS -o /dev/null "$url" 2>/dev/null; then break; fi
	sleep 0.1
done
curl -fsS -o /dev/null "$url" || die "the reference OP did not answer on $url (its log is not kept: run it by hand to see it)"

# sample NAME ARGS...: one sampler in the background, its records in DIR.
sample() {
	local name="$1"
	shift
	"$(tool sampler)" --postgres "" --every 1s "$@" -o "$out/s-$name.jsonl" 2>>"$out/sampler.log" &
	samplers+=($!)
}

log "refop on $url; $reps x (none, five, one, quiet) windows of discovery at $rate/s on $conns connections"
"$(tool loadstep)" --url "$url" --scenario discovery --connections 64 --warmup 3s --duration 5s -o /dev/null 2>>"$out/loadstep.log"
for r in $(seq "$reps"); do
	for c in none five one quiet; do
		case "$c" in
		five) for k in 1 2 3 4 5; do sample "$c-$r-$k" --pid "$refop_pid" --pss-every 2s --host --host-probe; done ;;
		one)
			for k in 1 2 3 4 5; do sample "$c-$r-$k" --pid "$refop_pid" --pss-every 2s --host --host-probe=false; done
			sample "$c-$r-host" --host --host-probe
			;;
		quiet) for k in 1 2 3 4 5; do sample "$c-$r-$k" --pid "$refop_pid" --pss-every 2s --host --host-probe=false; done ;;
		esac
		sleep 2
		if ((rate > 0)); then
			"$(tool loadstep)" --url "$url" --scenario discovery --connections "$conns" --rate "$rate" --ramp 1s \
				--warmup 2s --warmup-max 10s --warmup-stable 2 --warmup-tolerance 50 --duration 5s --interval 100ms \
				-o "$out/w-$c-$r.json" 2>>"$out/loadstep.log"
		else
			"$(tool loadstep)" --url "$url" --scenario discovery --connections "$conns" \
				--warmup 1s --warmup-max 8s --warmup-stable 2 --warmup-tolerance 10 --duration 5s --interval 100ms \
				-o "$out/w-$c-$r.json" 2>>"$out/loadstep.log"
		fi
		stop_samplers
		log "$c $r: $(jq -r '"\(.qps | round)/s, corrected p50 \(.corrected_latency_ms.p50 // .latency_ms.p50) ms, p99 \(.corrected_latency_ms.p99 // .latency_ms.p99) ms"' "$out/w-$c-$r.json")"
	done
done

# windows.tsv and summary.txt (scripts/lib/sampler-probe.jq): a window's
# phases count from the first host record of its samplers.
for c in none five one quiet; do
	for r in $(seq "$reps"); do
		t0=""
		[[ "$c" == none ]] || t0="$(cat "$out/s-$c-$r-"*.jsonl | jq -s -r -L "$IDPBENCH_ROOT/scripts/lib" 'include "sampler-probe"; [.[] | select(.source == "host") | .t] | min_by(ts) // ""')"
		jq -c -L "$IDPBENCH_ROOT/scripts/lib" --arg c "$c" --arg r "$r" --arg t0 "$t0" \
			'include "sampler-probe"; window($c; $r; $t0)' "$out/w-$c-$r.json"
	done
done >"$out/windows.jsonl"
jq -s -r -L "$IDPBENCH_ROOT/scripts/lib" 'include "sampler-probe"; tsv' "$out/windows.jsonl" >"$out/windows.tsv"
jq -s -r -L "$IDPBENCH_ROOT/scripts/lib" 'include "sampler-probe"; summary' "$out/windows.jsonl" | tee "$out/summary.txt"
