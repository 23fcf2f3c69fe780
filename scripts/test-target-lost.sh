#!/usr/bin/env bash
# test-target-lost.sh: a target killed in the middle of a step, with real
# processes on loopback addresses only.
#
#   scripts/test-target-lost.sh
#
# nginx serves a discovery document and logs every request it answers;
# loadstep runs c=8, a 1 s warmup and a 6 s window against it, and nginx is
# killed (SIGKILL, master and worker) 2 s into the window. Then:
# - loadstep exits 4 and the step says status target_lost, since about the
#   kill, with its refused connects counted as connect_errors, not requests:
#   it counts no more requests than nginx logged, plus one in flight per
#   connection;
# - it does not spin: its CPU from 0.5 s to 3 s after the kill, read from
#   /proc, stays under 20% of one core (each connection backs off 1 ms,
#   doubling to the 1 s interval);
# - the step is not complete for a resumed run (step_complete), and the
#   same step against nginx started again completes.
# Needs nginx (Debian package nginx-light, installed when missing and run as
# root) and jq.
#
# Environment: IDPBENCH_NO_BUILD=1 uses the loadstep already in IDPBENCH_BIN.
# Exit 0 only when every check passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=target-lost

case "${1:-}" in
"") ;;
-h | --help) script_help && exit 0 ;;
*) die "unknown argument: $1 (see --help)" ;;
esac

WORK=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n "$WORK" ]]; then
		stop_pid "$WORK/nginx.pid" 5 || rc=1
		stop_pid "$WORK/loadstep.pid" 5 || rc=1
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

ensure_pkg nginx nginx-light
ensure_pkg jq jq
require_cmd go python3 curl
WORK="$(make_tmpdir idpbench-target-lost)"
if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi
LOADSTEP="$(tool loadstep)"

port="$(free_port)"
URL="http://127.0.0.1:$port/.well-known/openid-configuration"
write_nginx "$WORK/nginx" "$port" "$WORK/nginx/access.log"
start_nginx() {
	start_bg nginx "$WORK/nginx.pid" "$WORK/nginx.log" nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log"
	wait_http "$URL" 200 20 "$WORK/nginx.pid" || die "nginx did not answer (log: $WORK/nginx/error.log)"
}
start_nginx

# cpu_ticks PID: user + system CPU of PID so far, in clock ticks.
cpu_ticks() {
	awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

out="$WORK/lost.json"
log "loadstep c=8, 1 s warmup + 6 s window; nginx killed 2 s into the window"
start_bg loadstep "$WORK/loadstep.pid" "$WORK/loadstep.log" \
	"$LOADSTEP" --url "$URL" --scenario discovery -c 8 --warmup 1s --duration 6s --interval 1s --timeout 5s -o "$out"
ls_pid="$(head -n1 "$WORK/loadstep.pid")"
sleep 3
nginx_pid="$(head -n1 "$WORK/nginx.pid")"
kill -KILL $(pgrep -P "$nginx_pid") "$nginx_pid"
killed_at="$(date -u +%s.%N)"
sleep 0.5
t0="$(cpu_ticks "$ls_pid")"
sleep 2.5
t1="$(cpu_ticks "$ls_pid")"
cpu_pct=$(((t1 - t0) * 100 * 100 / ($(getconf CLK_TCK) * 250)))
rc=0
wait "$ls_pid" || rc=$?
rm -f "$WORK/loadstep.pid"
served="$(wc -l <"$WORK/nginx/access.log")"
figures="$(jq -c '{status, target_lost_at, unreachable_s, requests, errors, connect_errors}' "$out")"
log "loadstep exit $rc; nginx logged $served requests; loadstep CPU after the kill ${cpu_pct}% of a core; step $figures"

((rc == 4)) || die "loadstep: want exit 4 (target lost), got $rc (log: $WORK/loadstep.log)"
jq -e --argjson killed "$killed_at" '.status == "target_lost" and
	(.target_lost_at | sub("\\.[0-9]+"; "") | fromdateiso8601) >= ($killed | floor) - 1 and
	.connect_errors.refused > 0 and .unreachable_s > 3 and .unreachable_s < 4.5' "$out" >/dev/null ||
	die "want a target_lost step since the kill, refused connects counted, ~4 s unreachable: got $figures"
jq -e --argjson served "$served" '.requests <= $served + .connections' "$out" >/dev/null ||
	die "the step counts $(jq .requests "$out") requests, nginx answered $served (+8 in flight at most)"
((cpu_pct < 20)) || die "loadstep used ${cpu_pct}% of a core against a dead target: want under 20% (backoff)"
log "ok: target_lost, refused connects are no requests, the driver idles at ${cpu_pct}% of a core"

step_complete "$out" && die "step_complete takes a target_lost step for complete: a resumed run would keep it"
start_nginx
"$LOADSTEP" --url "$URL" --scenario discovery -c 8 --warmup 1s --duration 2s --interval 1s --timeout 5s -o "$out" 2>>"$WORK/loadstep.log" ||
	die "the step again, nginx up: loadstep failed (log: $WORK/loadstep.log)"
step_complete "$out" || die "the step again, nginx up: not complete: $(jq -c '{status, connect_errors}' "$out")"
log "ok: a resumed run measures the step again, and it completes"
