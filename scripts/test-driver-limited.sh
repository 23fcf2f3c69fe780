#!/usr/bin/env bash
# test-driver-limited.sh: proves loadstep's driver-limited flag
# (driver.limited, schema.DriverLimit) in both directions, with real
# processes on loopback addresses only.
#
#   scripts/test-driver-limited.sh [--runs N]
#
#   --runs N   run each direction N times (default 1); every run must pass
#
# 1. starved: loadstep pinned (taskset) to one CPU that a busy loop
#    occupies, at the lowest priority (nice 19: the busy loop wins whatever
#    else runs there), against nginx pinned to another CPU, c=64:
#    driver.limited must be true (the driver is queued for its CPU with
#    requests to send, while nginx has time to spare)
# 2. a 5 ms server (scripts/testdata/slowserver), c=8, nothing pinned:
#    driver.limited must be false (the driver sleeps, waiting for responses)
# Each step is a 1 s warmup and a 3 s window; each check prints the
# driver's figures. Needs 2 CPUs, nginx (Debian package nginx-light,
# installed when missing and run as root), taskset and jq.
#
# Environment: IDPBENCH_NO_BUILD=1 uses the loadstep already in IDPBENCH_BIN.
# Exit 0 only when every check passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=driver-limited

usage() {
	script_help
	exit 2
}

RUNS=1
while (($# > 0)); do
	case "$1" in
	--runs) [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || usage; RUNS="$2" && shift ;;
	-h | --help) usage ;;
	*) log "unknown argument: $1" && usage ;;
	esac
	shift
done


test_scratch


ensure_pkg nginx nginx-light
ensure_pkg jq jq
require_cmd go taskset python3 curl
# The first two CPUs this process may use: the driver's and the server's.
read -r -a CPUS < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0))[:2])')
((${#CPUS[@]} == 2)) || die "needs 2 CPUs to pin the driver and the server apart, has ${#CPUS[@]}"
DRIVER_CPU="${CPUS[0]}" SERVER_CPU="${CPUS[1]}"

WORK="$(make_tmpdir idpbench-driver-limited)"
if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi
LOADSTEP="$(tool loadstep)"
(cd "$IDPBENCH_ROOT" && go build -o "$WORK/slowserver" ./scripts/testdata/slowserver)

TOTAL=$((2 * RUNS + 2)) N=0
next() { N=$((N + 1)) && step "$N" "$TOTAL" "$@"; }

next "servers: nginx on CPU $SERVER_CPU, a 5 ms server"
port="$(free_port)"
write_nginx "$WORK/nginx" "$port"
NGINX_URL="http://127.0.0.1:$port/.well-known/openid-configuration"
test_run_bg nginx taskset -c "$SERVER_CPU" nginx -p "$WORK/nginx" -c "$WORK/nginx/nginx.conf" -e "$WORK/nginx/error.log"
port="$(free_port)"
SLOW_URL="http://127.0.0.1:$port/.well-known/openid-configuration"
test_run_bg slowserver "$WORK/slowserver" --addr "127.0.0.1:$port" --delay 5ms
wait_http "$NGINX_URL" 200 20 "$WORK/nginx.pid" || die "nginx did not answer (log: $WORK/nginx/error.log)"
wait_http "$SLOW_URL" 200 20 "$WORK/slowserver.pid" || die "the 5 ms server did not answer (log: $WORK/slowserver.log)"

# run_step OUT ARGS...: one discovery step, 1 s warmup + 3 s window.
run_step() {
	local out="$1"
	shift
	"$@" --scenario discovery --warmup 1s --duration 3s --timeout 5s -o "$out" 2>>"$WORK/loadstep.log" ||
		die "loadstep failed (log: $WORK/loadstep.log)"
}

# check NAME FILE WANT: the step is complete without errors and its
# driver.limited is WANT; prints the figures the flag rests on.
check() {
	local name="$1" file="$2" want="$3" figures
	figures="$(jq -r '.driver | "limited=\(.limited) loop_busy_pct=\(.loop_busy_pct // 0 | round) cpu_pct=\(.cpu_pct | round) run_wait_s=\(.run_wait_s // "n/a") loop_wait_s=\(.loop_wait_s // "n/a") loops=\(.loops) host_cpu_pct=\(.host_cpu_pct | round)"' "$file")"
	figures+=" qps=$(jq -r '.qps | floor' "$file") ($(jq -r '.driver.limited_reason // "no reason: not limited"' "$file"))"
	jq -e '.status == "complete" and .requests > 0 and .error_rate == 0' "$file" >/dev/null ||
		die "$name: want a complete step without errors, got $(jq -c '{status, requests, errors}' "$file")"
	jq -e --argjson want "$want" '.driver.limited == $want' "$file" >/dev/null ||
		die "$name: want driver.limited=$want, got $figures"
	log "ok: $name: $figures"
}

next "a busy loop on CPU $DRIVER_CPU"
test_run_bg hog taskset -c "$DRIVER_CPU" bash -c 'while :; do :; done'
for ((r = 1; r <= RUNS; r++)); do
	next "starved driver: loadstep at nice 19 on CPU $DRIVER_CPU with the busy loop, nginx on CPU $SERVER_CPU, c=64 (run $r/$RUNS)"
	run_step "$WORK/starved-$r.json" nice -n 19 taskset -c "$DRIVER_CPU" "$LOADSTEP" --url "$NGINX_URL" -c 64
	check "starved driver (run $r)" "$WORK/starved-$r.json" true
done
stop_pid "$WORK/hog.pid" 5

for ((r = 1; r <= RUNS; r++)); do
	next "5 ms server, c=8, nothing pinned (run $r/$RUNS)"
	run_step "$WORK/slow-$r.json" "$LOADSTEP" --url "$SLOW_URL" -c 8
	check "5 ms server (run $r)" "$WORK/slow-$r.json" false
done
log "driver-limited flag: all checks passed"
