#!/usr/bin/env bash
# test-k8s.sh: Kubernetes mode's agents (deploy/kubernetes, scripts/k8s-step.sh)
# on a real Kubernetes on this machine -- API server, scheduler, Job
# controller and kubelets -- then nothing of it left.
#
#   scripts/test-k8s.sh
#
# 1. The images, built by our own Docker engine (scripts/lib/dockerd.sh): the
#    tools image FROM scratch with podstep, loadstep and podrun built static
#    (nothing can be pulled here, not even deploy/kubernetes/Dockerfile's
#    bases), and localhost/pause:test (podrun pause), the pods' sandbox.
# 2. The cluster (scripts/lib/k8s.sh), built from k8s.io/kubernetes
#    K8S_VERSION (the first run builds it, later runs take it from the
#    cache): etcd, kube-apiserver, kube-controller-manager, kube-scheduler on
#    127.0.0.1; three real nodes 127.0.0.2, 127.0.0.3, 127.0.0.4, a kubelet
#    and a containerd each, the images imported; kwok's simulated node
#    idpbench-node-idp, where a pod labelled app.kubernetes.io/part-of=
#    idp-under-test runs (the IdP the agents keep away from).
# 3. The step, as a user runs it: scripts/k8s-step.sh --agents 3 in rate mode
#    (k8sstep creates the Indexed Job, waits for it, collects each agent's
#    record with kubectl logs, merges them, deletes the Job). The target: a
#    pod reaches no loopback but its own, so every pod of the nodes gets
#    nginx on 127.0.0.1:8080 in its network namespace, logging every request,
#    before its containers start (scripts/lib/k8s-cni-target.sh, a CNI
#    plugin chained after the node's bridge).
#    Checked: exit 0; the merged step has 3 agents, complete, and exactly the
#    requests the three nginx logged less the warmup's rate x warmup slots;
#    the pods, as the API server placed them while they ran, have completion
#    indexes 0, 1 and 2, each on a node of its own, none on the IdP's; each
#    agent's loadstep ran as its pod's security context says (the kernel's
#    /proc/PID/status: user, group, fsGroup, no new privileges, seccomp, no
#    capability); the Job and its pods are gone after the step, the Secret
#    after its deletion.
# 4. The same step with --agents 4 on the three nodes: the scheduler leaves
#    one agent pending on the anti-affinity, and k8s-step.sh fails (exit 1)
#    at the start time naming the scheduler's reason, and deletes the Job and
#    its pods.
# 5. The cluster, the nginx and the engine stopped: no process names their
#    state directories, neither directory is left, no cgroup or bridge of the
#    nodes either.
#
# As root (dockerd, kubelets); installs etcd-server, containerd, runc and
# containernetworking-plugins from the OS packages when missing. Builds the
# tools; the first run builds Kubernetes and kwok (about 20 minutes on two
# shared cores), later runs take them from IDPBENCH_CACHE/k8s (a run then
# takes about 2 minutes). Everything of a run is in its state directories
# (IDPBENCH_TMP) but the nodes' cgroups and bridges; the next run cleans all
# of it after a kill -9, as it stops what a killed run left running.
# Exit codes: 0 all of it passes, 1 a failure, 2 a bad argument, 130 interrupted.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
# shellcheck source=SCRIPTDIR/lib/dockerd.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dockerd.sh"
# shellcheck source=SCRIPTDIR/lib/k8s.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/k8s.sh"
export IDPBENCH_LOG_TAG=test-k8s

case "${1:-}" in
"") ;;
-h | --help)
	script_help
	exit 0
	;;
*) usage_error "unknown argument: $1" ;;
esac

NS=idpbench
NODES=(127.0.0.2 127.0.0.3 127.0.0.4) # real nodes: a kubelet and a containerd each
IDP_NODE=idpbench-node-idp
RATE=300 WARMUP=2 # requests/s over all agents; warmup seconds
NGINX_PORT=8080   # in each pod's own network namespace
NGINX_URL="http://127.0.0.1:$NGINX_PORT/.well-known/openid-configuration"
STATE="$(k8s_state_dir)"
ENGINE="$(dockerd_state_dir)"
IMAGE="localhost/idpbench-tools:test-$TOOLS_VERSION"

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[[ -z "${STEP_PID:-}" ]] || kill "$STEP_PID" 2>/dev/null || true
	(k8s_down "$STATE") || rc=1
	(dockerd_down "$ENGINE") || rc=1
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# tools_image builds IMAGE on the engine: podstep and loadstep static in
# /usr/local/bin of an image FROM scratch, user 65532 (distroless's
# nonroot), and podrun; and localhost/pause:test, the pods' sandbox (podrun
# pause); both saved into $ENGINE/image/images.tar for the nodes.
tools_image() {
	local ctx="$ENGINE/image"
	mkdir -p "$ctx"
	(cd "$IDPBENCH_ROOT" && CGO_ENABLED=0 nice -n 19 go build -trimpath -buildvcs=false -o "$ctx/" \
		-ldflags "-X github.com/idpbench/idpbench/internal/cli.buildVersion=$TOOLS_VERSION" \
		./cmd/podstep ./cmd/loadstep ./internal/k8stest/podrun)
	printf '%s\n' 'FROM scratch' 'COPY podstep loadstep podrun /usr/local/bin/' 'USER 65532:65532' \
		'ENTRYPOINT ["/usr/local/bin/loadstep"]' >"$ctx/Dockerfile"
	DOCKER_BUILDKIT=0 docker build -q -t "$IMAGE" "$ctx" >/dev/null 2>"$ctx/build.log" ||
		die "docker build of $IMAGE failed: $(tail -n 3 "$ctx/build.log" | tr '\n' ' ')"
	printf '%s\n' "FROM $IMAGE" 'ENTRYPOINT ["/usr/local/bin/podrun", "pause"]' >"$ctx/Dockerfile.pause"
	DOCKER_BUILDKIT=0 docker build -q -f "$ctx/Dockerfile.pause" -t localhost/pause:test "$ctx" >/dev/null 2>"$ctx/build.log" ||
		die "docker build of localhost/pause:test failed: $(tail -n 3 "$ctx/build.log" | tr '\n' ' ')"
	docker save -o "$ctx/images.tar" "$IMAGE" localhost/pause:test
}

# placed_while PID records, while PID (k8s-step.sh) runs, where the API
# server placed each agent pod ($RUN/placed.jsonl: pod, node, completion
# index) and, once, the kernel's view of each agent's loadstep process
# ($RUN/procs/PID: /proc/PID/status).
placed_while() {
	local pods="$RUN/pods.json" pid
	mkdir -p "$RUN/procs"
	while kill -0 "$1" 2>/dev/null; do
		kubectl -n "$NS" get pods -l app.kubernetes.io/name=idpbench-agent -o json >"$pods" 2>/dev/null || true
		jq -c '.items[] | select(.spec.nodeName) | {pod: .metadata.name, node: .spec.nodeName,
			index: .metadata.annotations["batch.kubernetes.io/job-completion-index"]}' "$pods" 2>/dev/null >>"$RUN/placed.jsonl" || true
		for pid in $(pgrep -f -- '^/usr/local/bin/loadstep --output=/work/step.json --start-at=' || true); do
			[[ -e "$RUN/procs/$pid" ]] || cp "/proc/$pid/status" "$RUN/procs/$pid" 2>/dev/null || true
		done
		sleep 1
	done
	jq -s -c 'unique[]' "$RUN/placed.jsonl" >"$RUN/placed.tmp" && mv "$RUN/placed.tmp" "$RUN/placed.jsonl"
}

# secured N: each of the N agents' loadstep processes ran as the pod's
# security context says, as the kernel saw it: user and group 65532, the
# fsGroup 65532 among its groups, no new privileges, a seccomp filter
# (RuntimeDefault), no effective capability.
secured() {
	local f n=0
	for f in "$RUN"/procs/*; do
		[[ -e "$f" ]] || continue
		awk '$1 == "Uid:" && $2 == 65532 { u = 1 } $1 == "Gid:" && $2 == 65532 { g = 1 }
			$1 == "Groups:" { for (i = 2; i <= NF; i++) if ($i == 65532) f = 1 }
			$1 == "NoNewPrivs:" && $2 == 1 { p = 1 } $1 == "Seccomp:" && $2 == 2 { s = 1 }
			$1 == "CapEff:" && $2 ~ /^0+$/ { c = 1 } END { exit !(u && g && f && p && s && c) }' "$f" ||
			die "an agent's loadstep ran outside its pod's security context: $(grep -E '^(Uid|Gid|Groups|NoNewPrivs|Seccomp|CapEff):' "$f" | tr '\t\n' '  ')"
		n=$((n + 1))
	done
	((n == $1)) || die "saw $n agents' loadstep processes, want $1"
	log "the $n agents' loadstep ran as user and group 65532, in group 65532, with no new privileges, seccomp and no capability"
}

# run_step AGENTS NAME runs scripts/k8s-step.sh with AGENTS agents against
# the nginx of their pods, results in $RUN/NAME, its stderr in
# $RUN/NAME.log, placed_while beside it; sets STEP_RC.
run_step() {
	rm -rf "$STATE/targets" "$RUN/procs"
	: >"$RUN/placed.jsonl"
	"$IDPBENCH_ROOT/scripts/k8s-step.sh" --agents "$1" --image "$IMAGE" --namespace "$NS" \
		--url "$NGINX_URL" --scenario discovery -c "$((2 * $1))" --rate "$RATE" --warmup "${WARMUP}s" --duration 10s \
		--cpus 1 --memory 256Mi --start-in 30s --idp-label app.kubernetes.io/part-of=idp-under-test \
		--out "$RUN/$2" -- --product nginx --interval 1s --timeout 5s 2>"$RUN/$2.log" &
	STEP_PID=$!
	placed_while "$STEP_PID"
	STEP_RC=0
	wait "$STEP_PID" || STEP_RC=$?
	STEP_PID=""
}

# left prints what of the cluster, nginx and the engine is left, one a line.
left() {
	pgrep -a -f -- "$STATE/" || true
	pgrep -a -f -- "$ENGINE/" || true
	compgen -G "/sys/fs/cgroup/*/idpbench-k8s-$(k8s_tag "$STATE")-*" || true
	ip -o link show type bridge | grep -o "$(k8s_bridge_prefix "$STATE")[0-9]*" || true
	[[ ! -e "$STATE" ]] || echo "directory $STATE"
	[[ ! -e "$ENGINE" ]] || echo "directory $ENGINE"
}

require_cmd jq curl pgrep nginx docker nsenter ctr containerd ip
start=$SECONDS
step 1 5 "the tools, the tools image $IMAGE and localhost/pause:test on our Docker engine"
build_tools
dockerd_up "$ENGINE"
tools_image
PODRUN="$ENGINE/image/podrun"

step 2 5 "the control plane and kubelets (Kubernetes $K8S_VERSION): nodes ${NODES[*]}, kwok's $IDP_NODE for the IdP"
k8s_up "$STATE"
k8s_kwok_up "$STATE" "$IDP_NODE"
for node in "${NODES[@]}"; do k8s_node_up "$STATE" "$node" "$ENGINE/image/images.tar" "$NGINX_PORT" "$PODRUN"; done
RUN="$STATE/run"
mkdir -p "$RUN"
kubectl create namespace idp >/dev/null
kubectl -n idp run idp --image "$IMAGE" --restart Never --labels app.kubernetes.io/part-of=idp-under-test \
	--overrides "{\"spec\": {\"nodeName\": \"$IDP_NODE\"}}" --command -- /usr/local/bin/loadstep --help >/dev/null
kubectl -n idp wait --for condition=Ready --timeout 30s pod/idp >/dev/null || die "the IdP's pod did not run on $IDP_NODE"

step 3 5 "scripts/k8s-step.sh --agents 3 --rate $RATE on the kubelets"
kubectl create namespace "$NS" >/dev/null
(umask 077 && random_secret >"$RUN/probe") # a file in the Secret volume: mounted, never read
kubectl -n "$NS" create secret generic idpbench-agent --from-file=probe="$RUN/probe" >/dev/null
run_step 3 three
((STEP_RC == 0)) || die "k8s-step.sh --agents 3 failed (exit $STEP_RC): $(tail -n 5 "$RUN/three.log")"
merged="$RUN/three/discovery-c6-r$RATE-n3.json"
served="$(cat "$STATE"/targets/*/access.log | wc -l)"
jq -e --argjson served "$served" '.agents == 3 and .status == "complete" and .ok == .requests and
	.requests == $served - ((.rate_rps * .warmup_s) | ceil)' "$merged" >/dev/null ||
	die "merged step: $(jq -c '{agents, status, requests, ok, rate_rps, warmup_s}' "$merged"), want 3 agents, complete, and nginx's $served requests less rate x warmup"
jq -s -e --arg idp "$IDP_NODE" '(map(.index) | sort) == ["0", "1", "2"] and (map(.node) | unique | length) == 3 and
	all(.node != $idp)' "$RUN/placed.jsonl" >/dev/null ||
	die "the agents' placement: $(jq -s -c . "$RUN/placed.jsonl"), want indexes 0, 1, 2, each on a node of its own, none on $IDP_NODE"
secured 3
log "merged: $(jq -r '"\(.requests) requests of 3 agents"' "$merged") = nginx's $served less the warmup's $((RATE * WARMUP)); placed: $(jq -s -r 'map("\(.index)@\(.node)") | join(" ")' "$RUN/placed.jsonl")"
[[ -z "$(kubectl -n "$NS" get jobs,pods -o name)" ]] || die "left after k8s-step.sh: $(kubectl -n "$NS" get jobs,pods -o name | tr '\n' ' ')"
kubectl -n "$NS" delete secret idpbench-agent >/dev/null
[[ -z "$(kubectl -n "$NS" get secrets -o name)" ]] || die "the Secret is left after its deletion"

step 4 5 "scripts/k8s-step.sh --agents 4 on three free nodes: refused at the start time"
kubectl -n "$NS" create secret generic idpbench-agent --from-file=probe="$RUN/probe" >/dev/null
run_step 4 four
((STEP_RC == 1)) || die "k8s-step.sh --agents 4: exit $STEP_RC, want 1 (an agent pending on the anti-affinity)"
grep -q "didn't match pod anti-affinity rules" "$RUN/four.log" ||
	die "k8s-step.sh --agents 4 does not name the scheduler's anti-affinity: $(tail -n 5 "$RUN/four.log")"
log "refused: $(grep -m1 -o "agents not running at the start time.*" "$RUN/four.log" | cut -c1-160)..."
[[ -z "$(kubectl -n "$NS" get jobs,pods -o name)" ]] || die "left after the refused step: $(kubectl -n "$NS" get jobs,pods -o name | tr '\n' ' ')"

step 5 5 "the cluster, nginx and the engine stopped: nothing left"
k8s_down "$STATE"
dockerd_down "$ENGINE"
what="$(left)"
[[ -z "$what" ]] || die "left after the cluster's and the engine's down: ${what//$'\n'/; }"
log "passed in $((SECONDS - start)) s"
