# shellcheck shell=bash
# dockerd.sh: a Docker engine of our own, for compose mode and its tests: Debian's
# docker.io (dockerd, containerd, runc) installed as the other OS packages are,
# then a containerd and a dockerd started under one state directory STATE with
# their own data root, exec root, sockets and pid file, so a user's engine
# (/var/run/docker.sock, /run/containerd/containerd.sock, /var/lib/docker) is
# never touched: DOCKER_HOST points at ours. Source after common.sh.
# docs/design-reference.md#the-scripts.
#
# STATE (kept short: a unix socket's path has at most 107 bytes):
#   owner, lock          runstate claim's: one live session an engine; after a
#                        kill -9 the next dockerd_up cleans what was left
#   engine               the mark internal/runstate knows an engine by
#   docker.sock          dockerd's API (-H), containerd.sock containerd's
#   dockerd.pid          dockerd's --pidfile
#   data/                dockerd's --data-root (containerd's root: data/containerd)
#   exec/                dockerd's --exec-root (containerd's state: exec/containerd)
#   logs/                containerd.log, dockerd-DRIVER.log (one a storage driver tried)
#   daemon.json, containerd.toml, key.json (dockerd's identity key)
# `runstate stop STATE` stops it: dockerd (which stops its containers), then
# containerd, then what they left (shims, container processes), unmounts what is
# mounted under STATE and removes the containers' cgroups (internal/runstate,
# engine.go); `runstate clean` does the same for a killed session's engine.
# Outside STATE it leaves what every engine on the machine shares, as it is:
# the directories /run/containerd/s (containerd 1.6 puts its shims' sockets
# there, whatever its state) and /run/docker/plugins, the cgroup parent "docker".

# dockerd_install makes sure dockerd, containerd and runc are there: Debian's
# docker.io, without its recommends. Its docker CLI is /usr/bin/docker: a
# newer one in /usr/local/bin stays first on PATH and is the one used.
dockerd_install() {
	ensure_pkg dockerd docker.io --no-install-recommends
	require_cmd dockerd containerd runc docker
}

# dockerd_state_dir prints the engine state of this checkout:
# IDPBENCH_TMP/idpbench-dockerd-<cksum of the checkout's path>, the same on
# every run, so a run after a kill -9 finds what the killed one left.
dockerd_state_dir() {
	printf '%s/idpbench-dockerd-%s\n' "$IDPBENCH_TMP" "$(printf '%s' "$IDPBENCH_ROOT" | cksum | cut -d' ' -f1)"
}

# dockerd_host STATE prints the DOCKER_HOST of the engine in STATE.
dockerd_host() { printf 'unix://%s/docker.sock\n' "$1"; }

# dockerd_up STATE [TIMEOUT_S]: installs the engine when missing, claims STATE
# (cleaning what a killed session left there), starts containerd and dockerd
# under it, exports DOCKER_HOST, and returns once `docker info` answers
# (default within 60 s). Storage driver overlay2; when dockerd exits on it,
# vfs, saying so. Dies when the engine does not start, the end of its log in
# the message (and IDPBENCH_REASON_FILE): the reason a caller gives for
# compose mode being N/A. Either way the caller's cleanup ends it with
# dockerd_down STATE. No default bridge, no iptables rules, no masquerading:
# a container on --network host, or on a user-defined bridge (compose's
# project network, which dockerd still creates; services find each other by
# name) with its ports published on 127.0.0.1 through docker-proxy.
dockerd_up() {
	local state="$1" timeout="${2:-60}" driver
	dockerd_install
	((${#state} <= 60)) || die "engine state $state: at most 60 characters (unix socket paths under it are limited); set IDPBENCH_TMP shorter"
	runstate claim --owner "$$" "$state" || die "cannot claim the engine state $state (above)"
	runstate clean "$state" || die "cannot clean what an earlier engine left in $state (above)"
	printf '%s\n' "a Docker engine of scripts/lib/dockerd.sh" >"$state/engine"
	mkdir -p "$state/data" "$state/exec" "$state/logs"
	# Not /etc/docker/daemon.json; the identity key dockerd 20.10 makes, not /etc/docker/key.json.
	printf '{"deprecated-key-path": "%s/key.json"}\n' "$state" >"$state/daemon.json"
	dockerd_containerd_config "$state" >"$state/containerd.toml"
	export DOCKER_HOST
	DOCKER_HOST="$(dockerd_host "$state")"
	unset DOCKER_CONTEXT DOCKER_TLS_VERIFY DOCKER_CERT_PATH
	dockerd_start_containerd "$state"
	for driver in overlay2 vfs; do
		dockerd_start "$state" "$driver" "$timeout" && break
		[[ "$driver" == overlay2 ]] || die "no Docker engine: dockerd exited with storage driver vfs too: $(dockerd_log_end "$state" vfs)"
		warn "dockerd exited with storage driver overlay2 ($(dockerd_log_end "$state" overlay2)); trying vfs"
	done
	log "Docker engine up: $DOCKER_HOST (dockerd $(docker version --format '{{.Server.Version}}'), storage driver $(docker info --format '{{.Driver}}'))"
}

# dockerd_containerd_config STATE prints containerd's configuration: every
# path under STATE; no CRI (Kubernetes) plugin, no /opt/containerd.
dockerd_containerd_config() {
	cat <<EOF
version = 2
root = "$1/data/containerd"
state = "$1/exec/containerd"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt"]

[grpc]
  address = "$1/containerd.sock"
EOF
}

# dockerd_start_containerd STATE starts containerd in a session of its own and
# waits (10 s at most) for its socket. dockerd is given it (--containerd):
# without that flag dockerd would use a system containerd whenever
# /run/containerd/containerd.sock exists.
dockerd_start_containerd() {
	local state="$1" pid deadline=$((SECONDS + 10))
	log "starting containerd ($(containerd --version | cut -d' ' -f3)) in $state"
	# setsid -w: $! lives as long as containerd, also when setsid has to fork;
	# disowned: the shell does not report it when runstate stop ends it.
	setsid -w containerd --config "$state/containerd.toml" </dev/null >>"$state/logs/containerd.log" 2>&1 &
	pid=$!
	disown "$pid"
	until [[ -S "$state/containerd.sock" ]]; do
		kill -0 "$pid" 2>/dev/null || die "no Docker engine: containerd exited: $(tail -n 3 "$state/logs/containerd.log" | tr '\n' ' ')"
		((SECONDS < deadline)) || die "no Docker engine: containerd made no socket within 10 s: $(tail -n 3 "$state/logs/containerd.log" | tr '\n' ' ')"
		sleep 0.1
	done
}

# dockerd_start STATE DRIVER TIMEOUT_S starts dockerd on storage driver DRIVER
# and waits for `docker info` to answer; fails (1) when dockerd exits first,
# dies when it does not answer in time.
dockerd_start() {
	local state="$1" driver="$2" timeout="$3" pid deadline
	log "starting dockerd ($(dockerd --version | cut -d' ' -f3 | tr -d ,), storage driver $driver) in $state"
	setsid -w dockerd --config-file "$state/daemon.json" --data-root "$state/data" --exec-root "$state/exec" \
		--pidfile "$state/dockerd.pid" -H "$DOCKER_HOST" --containerd "$state/containerd.sock" \
		--storage-driver "$driver" --iptables=false --ip-masq=false --bridge=none \
		</dev/null >>"$state/logs/dockerd-$driver.log" 2>&1 &
	pid=$!
	disown "$pid"
	deadline=$((SECONDS + timeout))
	until timeout 10 docker info >/dev/null 2>&1; do
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < deadline)) || die "no Docker engine: dockerd did not answer within ${timeout} s: $(dockerd_log_end "$state" "$driver")"
		sleep 0.2
	done
}

# dockerd_log_end STATE DRIVER prints the last 3 lines of dockerd's log (its
# start on storage driver DRIVER) on one line.
dockerd_log_end() {
	tail -n 3 "$1/logs/dockerd-$2.log" 2>/dev/null | tr '\n' ' '
}

# dockerd_down STATE stops the engine in STATE and what it left (runstate
# stop), then deletes STATE; nothing to do when STATE does not exist, and
# nothing but a warning when a live session other than this shell holds it
# (its claim: another run's engine). Dies naming what could not be stopped,
# unmounted or removed.
dockerd_down() {
	local state="$1" owner
	[[ -e "$state" ]] || return 0
	owner="$(head -n1 "$state/owner" 2>/dev/null || true)"
	if [[ -n "$owner" && "$owner" != "$$" ]] && runstate alive "$state/owner"; then
		warn "not stopping the Docker engine in $state: a live session (pid $owner) holds it"
		return 0
	fi
	log "stopping the Docker engine in $state"
	runstate stop "$state" || die "the Docker engine in $state could not be stopped or cleaned up (above)"
	runstate release "$state" || die "cannot delete the engine state $state"
}
