#!/usr/bin/env bash
# test-dockerd.sh: the Docker engine of scripts/lib/dockerd.sh, proved on one
# local image, also after a kill -9 (a phase of scripts/test.sh).
#
#   scripts/test-dockerd.sh
#
# 1. A copy of this script (--hold FILE) brings the engine up in this checkout's
#    engine state (dockerd_state_dir) with the probe running, and is killed with
#    kill -9; checked: the engine and the probe outlive it.
# 2. dockerd_up on the same state, as the next session: its claim finds the
#    killed one and `runstate clean` stops what it left; checked: none of those
#    processes runs and the probe's port is free.
# 3. The probe: slowserver (internal/nginxtest/slowserver) built static
#    (CGO_ENABLED=0) into an image FROM scratch, idpbench/slowserver:local, by
#    this engine (nothing is pulled), run with --network host on a free
#    127.0.0.1 port; checked: it answers over HTTP from the host, `docker stats`
#    gives its memory, the sampler's container source (sampler --docker) reads
#    it; then it is stopped and removed (and `docker ps -a` lists nothing).
# 4. The probe run again, dockerd and containerd killed with kill -9 under it
#    (the shim and the probe live on), then dockerd_down; checked: no process
#    names the state, the probe's port is free, nothing is mounted under the
#    state, no cgroup of the probe's container is left, the state is gone.
#
# Everything it writes is under the state, which the next run cleans after a
# kill -9 as it cleans the engine. As root (dockerd); installs docker.io when
# dockerd is missing. Builds the tools.
# Exit codes: 0 all of it passes, 1 a failure (an engine that does not start
# too: its reason is said), 2 a bad argument, 130 interrupted.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
# shellcheck source=SCRIPTDIR/lib/dockerd.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dockerd.sh"
export IDPBENCH_LOG_TAG=test-dockerd

HOLD=""
case "${1:-}" in
"") ;;
--hold) HOLD="${2:?--hold FILE}" ;;
-h | --help)
	script_help
	exit 0
	;;
*) usage_error "unknown argument: $1" ;;
esac

PROBE=idpbench-dockerd-probe
IMAGE=idpbench/slowserver:local
STATE="$(dockerd_state_dir)"

# probe_up PORT builds the probe's image in STATE/probe and runs it on
# 127.0.0.1:PORT, returning once it answers (30 s at most).
probe_up() {
	local ctx="$STATE/probe"
	mkdir -p "$ctx"
	(cd "$IDPBENCH_ROOT" && CGO_ENABLED=0 go build -buildvcs=false -o "$ctx/slowserver" ./internal/nginxtest/slowserver)
	printf '%s\n' 'FROM scratch' 'COPY slowserver /slowserver' 'ENTRYPOINT ["/slowserver"]' >"$ctx/Dockerfile"
	# The legacy builder: the docker CLI here has no buildx, and nothing is pulled.
	DOCKER_BUILDKIT=0 docker build -q -t "$IMAGE" "$ctx" >/dev/null 2>"$ctx/build.log" ||
		die "docker build failed: $(tail -n 3 "$ctx/build.log" | tr '\n' ' ')"
	docker run -d --pull=never --name "$PROBE" --network host "$IMAGE" --addr "127.0.0.1:$1" --delay 0s >/dev/null
	runstate wait-http --url "http://127.0.0.1:$1/" --timeout 30s || die "the probe does not answer on 127.0.0.1:$1"
}

# engine_left ID prints what of the engine in STATE is left, one a line: a
# process whose command line names STATE, a mount under it, a cgroup of the
# container ID, STATE itself.
engine_left() {
	pgrep -a -f -- "$STATE" || true
	awk -v d="$STATE" '$5 == d || index($5, d "/") == 1 { print "mount " $5 }' /proc/self/mountinfo
	compgen -G "/sys/fs/cgroup/*/docker/$1" || true
	compgen -G "/sys/fs/cgroup/docker/$1" || true
	[[ ! -e "$STATE" ]] || echo "directory $STATE"
}

if [[ -n "$HOLD" ]]; then
	# The session step 1 kills: no trap; what it leaves is the next session's to clean.
	dockerd_up "$STATE"
	port="$(free_port)"
	probe_up "$port"
	printf '%s\n' "$port" >"$HOLD.tmp" && mv "$HOLD.tmp" "$HOLD"
	exec sleep 600
fi

HELD=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n "$HELD" ]]; then kill -9 "$HELD" 2>/dev/null || true; fi
	dockerd_down "$STATE" || rc=1
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build_tools
require_cmd jq curl pgrep awk
start=$SECONDS

step 1 4 "an engine and the probe up in a session that is then killed with kill -9"
# The file it writes once ready: in the state, which its claim cleaned, named
# by this run (a killed run's is not this run's).
held="$STATE/held-$$"
"$0" --hold "$held" &
HELD=$!
deadline=$((SECONDS + 180)) # a first static build of the probe takes a while
until [[ -s "$held" ]]; do
	kill -0 "$HELD" 2>/dev/null || die "the session to be killed failed before its probe answered (above)"
	((SECONDS < deadline)) || die "the session to be killed was not ready within 180 s"
	sleep 0.2
done
port="$(<"$held")"
probe_pid="$(DOCKER_HOST="$(dockerd_host "$STATE")" docker inspect --format '{{.State.Pid}}' "$PROBE")"
mapfile -t before < <(pgrep -f -- "$STATE")
before+=("$probe_pid")
kill -9 "$HELD"
{ wait "$HELD"; } 2>/dev/null || true # bash's "Killed" line: it is meant
HELD=""
for pid in "${before[@]}"; do
	runstate alive --pid "$pid" || die "pid $pid of the killed session's engine is gone already: nothing to clean"
done
log "killed the session; its engine and probe run on: pids ${before[*]}, port $port"

step 2 4 "the next session cleans what the killed one left"
dockerd_up "$STATE"
for pid in "${before[@]}"; do
	! runstate alive --pid "$pid" || die "pid $pid of the killed session's engine still runs after the next session's clean"
done
runstate port-free "$port" || die "port $port of the killed session's probe is still held"

step 3 4 "the probe: an image FROM scratch built here, --network host on 127.0.0.1"
port="$(free_port)"
probe_up "$port"
curl -fsS --max-time 10 "http://127.0.0.1:$port/" | jq -e '.issuer == "http://127.0.0.1/"' >/dev/null ||
	die "the probe's answer is not slowserver's discovery document"
[[ "$(docker inspect --format '{{.HostConfig.NetworkMode}}' "$PROBE")" == host ]] || die "the probe is not on the host's network"
stats="$STATE/probe/stats.json" samples="$STATE/probe/samples.jsonl"
docker stats --no-stream --format '{{json .}}' "$PROBE" >"$stats"
jq -e --arg n "$PROBE" '.Name == $n and (.MemUsage | test("^[0-9.]+[KMG]i?B /"))' "$stats" >/dev/null ||
	die "docker stats gives no memory for the probe: $(<"$stats")"
"$(tool sampler)" --docker "$PROBE" --host=false --duration 3s -o "$samples"
jq -s -e --arg s "container:$PROBE" 'map(select(.source == $s and .rss_bytes > 0)) | length > 0' "$samples" >/dev/null ||
	die "the sampler's container source read no memory of the probe: $(head -c 300 "$samples")"
log "the probe answered; docker stats: $(jq -r .MemUsage "$stats"); sampler: $(jq -s -r 'map(.rss_bytes) | max' "$samples") bytes"
docker stop --time 10 "$PROBE" >/dev/null
docker rm "$PROBE" >/dev/null
[[ -z "$(docker ps -a -q)" ]] || die "containers left after docker rm: $(docker ps -a -q | tr '\n' ' ')"

step 4 4 "dockerd and containerd killed with kill -9 under the probe, then the engine stopped: nothing of it left"
port="$(free_port)"
docker run -d --pull=never --name "$PROBE" --network host "$IMAGE" --addr "127.0.0.1:$port" --delay 0s >/dev/null
runstate wait-http --url "http://127.0.0.1:$port/" --timeout 30s || die "the probe does not answer on 127.0.0.1:$port"
id="$(docker inspect --format '{{.Id}}' "$PROBE")"
probe_pid="$(docker inspect --format '{{.State.Pid}}' "$PROBE")"
kill -9 "$(head -n1 "$STATE/dockerd.pid")" "$(pgrep -f -- "^containerd --config $STATE/")"
shim="$(pgrep -f -- "containerd-shim-runc-v2 .*-address $STATE/")" || die "no shim of the engine runs"
runstate alive --pid "$probe_pid" || die "the probe died with dockerd: nothing for dockerd_down to clear"
log "killed dockerd and containerd; the shim (pid $shim) and the probe (pid $probe_pid) run on"
dockerd_down "$STATE"
runstate port-free "$port" || die "port $port of the probe is still held after dockerd_down"
left="$(engine_left "$id")"
[[ -z "$left" ]] || die "left after dockerd_down: ${left//$'\n'/; }"
log "passed in $((SECONDS - start)) s"
