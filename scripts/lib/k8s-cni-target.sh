#!/usr/bin/env bash
# k8s-cni-target.sh: a CNI plugin (type idpbench-target) chained after a
# test node's bridge (scripts/lib/k8s.sh, k8s_node_up with a target port):
# on ADD it starts nginx on 127.0.0.1:PORT in the new pod's network
# namespace, logging every request, and returns once it answers, before the
# kubelet starts the pod's containers: a pod reaches no loopback but its
# own, so this is where a test's load can go without leaving 127.0.0.1. On
# DEL it stops that nginx; its access log stays. containerd runs it with
# its own environment (IDPBENCH_ROOT, IDPBENCH_BIN, ...: the test's) and
# the CNI variables; the network configuration on stdin names the cluster's
# state ("state"), the port ("port") and the podrun that writes nginx's
# config ("podrun", internal/k8stest/podrun). Everything in
# STATE/targets/CONTAINER_ID; the nginx is recorded in
# STATE/pids/nginx-CONTAINER_ID.pid, so the cluster's down stops it too.
# Exit 0 done, 1 nginx did not start or answer, 2 no CNI_COMMAND it knows.
#
#   CNI_COMMAND=VERSION scripts/lib/k8s-cni-target.sh </dev/null
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/common.sh"
# shellcheck source=SCRIPTDIR/k8s.sh
source "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/k8s.sh"
export IDPBENCH_LOG_TAG=k8s-cni-target

case "${1:-}" in
-h | --help)
	script_help
	exit 0
	;;
esac
case "${CNI_COMMAND:-}" in
VERSION)
	printf '{"cniVersion": "0.4.0", "supportedVersions": ["0.3.0", "0.3.1", "0.4.0"]}\n'
	exit 0
	;;
ADD | DEL | CHECK) ;;
*) usage_error "CNI_COMMAND ${CNI_COMMAND:-}: want ADD, DEL, CHECK or VERSION (a CNI plugin: containerd runs it)" ;;
esac
conf="$(cat)"
state="$(jq -r .state <<<"$conf")"
port="$(jq -r .port <<<"$conf")"
podrun="$(jq -r .podrun <<<"$conf")"
dir="$state/targets/$CNI_CONTAINERID"
name="nginx-$CNI_CONTAINERID"
case "$CNI_COMMAND" in
ADD)
	mkdir -p "$dir"
	"$podrun" nginx-conf --dir "$dir" --port "$port" --access-log "$dir/access.log"
	k8s_start "$state" "$name" nsenter --net="$CNI_NETNS" nginx -p "$dir" -c "$dir/nginx.conf" -e stderr
	nsenter --net="$CNI_NETNS" "$(tool runstate)" wait-http --url "http://127.0.0.1:$port/.well-known/openid-configuration" \
		--timeout 10s --pidfile "$state/pids/$name.pid" >&2 || die "nginx does not answer in $CNI_NETNS: $(k8s_log_end "$state" "$name")"
	# The wait's request is not the load's: nginx logs it once the answer is
	# sent, so it may not be in the log yet when the answer is read.
	for _ in {1..100}; do
		[[ ! -s "$dir/access.log" ]] || break
		sleep 0.05
	done
	[[ -s "$dir/access.log" ]] || die "nginx in $CNI_NETNS did not log the wait's request within 5 s"
	: >"$dir/access.log"
	jq -c .prevResult <<<"$conf"
	;;
DEL)
	[[ ! -e "$state/pids/$name.pid" ]] || runstate stop-group --timeout 10s "$state/pids/$name.pid" >&2
	;;
esac
