#!/usr/bin/env bash
# agents.sh: N local loadstep agents run one step the way the pods of a
# Kubernetes Indexed Job would, against nginx on loopback; their records
# merged by aggregate merge and checked against nginx's own access log.
#
#   scripts/agents.sh [--agents N]
#
# Every agent is one loadstep process with the flags a Job's pod gets: the
# step's flags (the whole step's -c and --rate), one --start-at for all, a
# few seconds ahead (the setup of every agent fits in it), and
# --segment I/N for agent I, each writing its own record; then
# `aggregate merge` of the N records. nginx (one worker) serves a discovery
# document and logs every request it answers; its log is emptied after its
# readiness check, so it holds the agents' requests only.
#   1. rate mode, N agents x 1,000 requests/s (-c 4N --rate 1000N), a 2 s
#      warmup and a 10 s window: the merged step has N agents, c=4N, rate
#      1000N, 10,000N requests +-1%, exactly the requests nginx logged in the
#      window: all it logged less the warmup's slots of the schedule
#      (rate x warmup; the schedule is fixed and every slot of it was sent:
#      the agents started within one interval of --start-at and none was
#      late by the timeout), its histogram count is the sum of the agents'
#      and its requests, no request failed; each agent ran 4 connections and
#      1,000 requests/s and says when it started; the start skew is printed.
#   2. closed loop, N agents x c=8 (-c 8N), a 1 s warmup and a 5 s window:
#      one step of N agents with c=8N whose requests and histogram count
#      are the agents' sums, no request failed, nginx answered at least as
#      many (its count includes the warmup's).
#   3. the merge of a gap (every agent of the first pass but agent 1: 0 and
#      2 of 3) is refused, exit 1, naming the missing index.
# The merged steps' summaries are printed. Needs nginx (Debian package
# nginx-light, installed when missing and run as root) and jq.
#
#   --agents N   agents per step, 2 or more (default 3)
#
# Environment: IDPBENCH_NO_BUILD=1 uses the tools already in IDPBENCH_BIN.
# Exit 0 only when every check passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=agents

N=3
while (($# > 0)); do
	case "$1" in
	--agents)
		if ! [[ "${2:-}" =~ ^[0-9]+$ ]] || (($2 < 2)); then die "--agents: want a number of agents, 2 or more"; fi
		N="$2"
		shift 2
		;;
	-h | --help) script_help && exit 0 ;;
	*) die "unknown argument: $1 (see --help)" ;;
	esac
done

test_scratch

ensure_pkg nginx nginx-light
ensure_pkg jq jq
require_cmd go python3 curl
WORK="$(make_tmpdir idpbench-agents)"
if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi
LOADSTEP="$(tool loadstep)" AGGREGATE="$(tool aggregate)"

port="$(free_port)"
URL="http://127.0.0.1:$port/.well-known/openid-configuration"
ACCESS="$WORK/nginx/access.log"
write_nginx "$WORK/nginx" "$port" "$ACCESS"
test_run_bg nginx nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log"
wait_http "$URL" 200 20 "$WORK/nginx.pid" || die "nginx did not answer (log: $WORK/nginx/error.log)"

# agents NAME LEAD_S FLAGS...: N loadstep agents of one step into
# WORK/NAME/agent-I.json, as a Job's pods: the step's FLAGS, one
# --start-at LEAD_S seconds ahead, --segment I/N. nginx's log is emptied
# first (nginx appends), so it holds this step's requests only. Dies
# naming the agent that failed.
agents() {
	local name="$1" lead="$2" start_at i pid rc
	shift 2
	mkdir -p "$WORK/$name"
	: >"$ACCESS"
	start_at="$(date -u -d "+$lead sec" '+%Y-%m-%dT%H:%M:%S.%NZ')"
	log "$N agents, --start-at $start_at: loadstep $* --segment I/$N"
	for ((i = 0; i < N; i++)); do
		test_run_bg "$name-$i" "$LOADSTEP" --url "$URL" --scenario discovery --product nginx "$@" \
			--start-at "$start_at" --segment "$i/$N" -o "$WORK/$name/agent-$i.json"
	done
	for ((i = 0; i < N; i++)); do
		pid="$(head -n1 "$WORK/$name-$i.pid")"
		rc=0
		wait "$pid" || rc=$?
		rm -f "$WORK/$name-$i.pid"
		((rc == 0)) || die "agent $i/$N of $name: loadstep exit $rc: $(tail -n1 "$WORK/$name-$i.log")"
		log "agent $i/$N: $(tail -n1 "$WORK/$name-$i.log")"
	done
	"$AGGREGATE" merge -o "$WORK/$name/merged.json" "$WORK/$name"/agent-*.json ||
		die "aggregate merge of the $name agents failed"
	"$AGGREGATE" summary "$WORK/$name/merged.json" >&2
}

# sums NAME prints the agents' summed requests and histogram counts as
# JSON, from aggregate summary (no HdrHistogram decoding in shell).
sums() {
	"$AGGREGATE" summary --format json "$WORK/$1"/agent-*.json |
		jq -s -c '{requests: (map(.requests) | add), histogram_count: (map(.histogram_count) | add)}'
}

# figures NAME prints the merged step's figures, for an error.
figures() {
	jq -c '{agents, connections, rate_rps, warmup_s, requests, ok, errors, start_skew_ms, status}' "$WORK/$1/merged.json"
}

step 1 3 "rate mode: $N agents x 1,000 requests/s, 2 s warmup, 10 s window"
agents rate 4 -c $((4 * N)) --rate $((1000 * N)) --warmup 2s --duration 10s --interval 1s --timeout 5s
served="$(wc -l <"$ACCESS")"
sum="$(sums rate)"
merged="$WORK/rate/merged.json"
hist="$("$AGGREGATE" summary --format json "$merged" | jq .histogram_count)"
log "merged: $(figures rate), histogram $hist; the agents' sums $sum; nginx logged $served"
jq -e --argjson n "$N" '.agents == $n and .connections == 4 * $n and .rate_rps == 1000 * $n and .segment == null and
	(.requests - 10000 * $n | fabs) <= 100 * $n and .status == "complete" and .ok == .requests and
	(.connect_errors.unsent // 0) == 0' "$merged" >/dev/null ||
	die "want $N agents, c=$((4 * N)), rate $((1000 * N)), 10,000 x $N requests +-1%, complete, no failure: got $(figures rate)"
jq -e --argjson served "$served" '.requests == $served - (.rate_rps * .warmup_s | ceil)' "$merged" >/dev/null ||
	die "want the requests nginx logged in the window, all $served it logged less the warmup's rate x warmup slots: got $(figures rate)"
jq -e --argjson sum "$sum" --argjson hist "$hist" '$hist == $sum.histogram_count and $hist == .requests and
	.requests == $sum.requests' "$merged" >/dev/null ||
	die "want a histogram count ($hist) equal to the agents' sum $sum and to the requests: got $(figures rate)"
jq -e -s --arg n "$N" 'length == ($n | tonumber) and all(.connections == 4 and .rate_rps == 1000 and
	.segment.total_rate_rps == 1000 * ($n | tonumber) and .start_at != null and .start_late_ms < 1000) and
	(map(.start_at) | unique | length == 1)' "$WORK/rate"/agent-*.json >/dev/null ||
	die "want every agent at 4 connections and 1,000 requests/s of the whole, one start_at, each started within a second of it"
log "ok: rate mode merged exactly: $(jq .requests "$WORK/rate/merged.json") requests = nginx's $served less the warmup's $(jq '.rate_rps * .warmup_s | ceil' "$WORK/rate/merged.json")"

step 2 3 "closed loop: $N agents x c=8, 1 s warmup, 5 s window"
agents closed 3 -c $((8 * N)) --warmup 1s --duration 5s --interval 1s --timeout 5s
served="$(wc -l <"$ACCESS")"
sum="$(sums closed)"
hist="$("$AGGREGATE" summary --format json "$WORK/closed/merged.json" | jq .histogram_count)"
log "merged: $(figures closed), histogram $hist; the agents' sums $sum; nginx logged $served"
jq -e --argjson n "$N" --argjson sum "$sum" --argjson hist "$hist" --argjson served "$served" \
	'.agents == $n and .connections == 8 * $n and .rate_rps == 0 and .requests == $sum.requests and
	$hist == $sum.histogram_count and $hist == .requests and .ok == .requests and .status == "complete" and
	.requests <= $served' "$WORK/closed/merged.json" >/dev/null ||
	die "want one step of $N agents, c=$((8 * N)), the agents' summed requests and histogram counts ($sum, $hist), no failure, no more than nginx's $served: got $(figures closed)"
log "ok: closed loop merged to c=$((8 * N)) of $N agents"

step 3 3 "the merge of a gap is refused"
gap=() rc=0
for ((i = 0; i < N; i++)); do ((i == 1)) || gap+=("$WORK/rate/agent-$i.json"); done
"$AGGREGATE" merge "${gap[@]}" >/dev/null 2>"$WORK/gap.err" || rc=$?
cat "$WORK/gap.err" >&2
if ((rc != 1)) || ! grep -qF "segment 1 of $N missing" "$WORK/gap.err"; then
	die "the merge of every agent but 1 of $N: exit $rc, want 1 naming the missing index 1"
fi
log "ok: a gap is refused, naming the missing index"
