#!/usr/bin/env bash
# test-k8s.sh: Kubernetes mode's agents (deploy/kubernetes, scripts/k8s-step.sh)
# on a real API server, on this machine, then nothing of it left.
#
#   scripts/test-k8s.sh
#
# 1. The tools image, built by our own Docker engine (scripts/lib/dockerd.sh)
#    FROM scratch with podstep, loadstep and podrun built static: nothing can
#    be pulled here, not even deploy/kubernetes/Dockerfile's bases.
# 2. A single-node control plane on 127.0.0.1 (scripts/lib/k8s.sh): etcd,
#    kube-apiserver, kube-controller-manager and kube-scheduler built from
#    k8s.io/kubernetes (K8S_VERSION; built the first time, then cached), and
#    kwok's simulated nodes: idpbench-node-0..2 for the agents and
#    idpbench-node-idp, where a pod labelled app.kubernetes.io/part-of=
#    idp-under-test runs.
# 3. The step, as a user runs it: scripts/k8s-step.sh --agents 3 in rate mode
#    (k8sstep creates the Indexed Job, waits, collects each agent's record with
#    kubectl logs, merges, deletes the Job). No kubelet runs here (the README's
#    "Beyond one machine" says why), so this script stands in for the
#    kubelet's part: each agent pod, once the scheduler has bound it, gets a
#    sandbox (a container with a network namespace of its own, like the
#    kubelet's pause container), nginx on 127.0.0.1 in that namespace logging
#    every request (the step's target: a pod reaches no loopback but its
#    own), and its container on the Docker engine with the pod's command,
#    arguments and environment as the API server returns them ($(VAR)
#    expanded, the completion index from the pod's annotation), its user,
#    security settings, limits, Secret volume and emptyDir
#    (internal/k8stest/podrun); when the container exits, kwok is given its
#    log file (a Logs object: the API server's kubectl logs reach kwok's
#    kubelet server) and its exit code (an annotation that kwok's Stage
#    pod-exit makes the pod's Succeeded or Failed).
#    Checked: exit 0; the merged step has 3 agents, complete, and exactly the
#    requests the three nginx logged less the warmup's rate x warmup slots;
#    the pods ran with completion indexes 0, 1, 2, each on an agent node of
#    its own (as the API server bound them); the Job and its pods are gone
#    after the step, the Secret after its deletion.
# 4. The same step with --agents 4 on the three agent nodes: the scheduler
#    leaves one agent pending on the anti-affinity, and k8s-step.sh fails
#    (exit 1) at the start time naming the scheduler's reason and deletes the
#    Job and its pods.
# 5. The cluster, the nginx and the engine stopped: no process names their
#    state directories and neither directory is left.
#
# As root (dockerd; etcd-server installed when etcd is missing). Builds the
# tools; the first run builds Kubernetes and kwok (tens of minutes on two
# cores), later runs take them from IDPBENCH_CACHE/k8s. Everything of a run
# is in its state directories (IDPBENCH_TMP), which the next run cleans after
# a kill -9, as it stops what a killed run left running.
# Exit codes: 0 all of it passes, 1 a failure, 2 a bad argument, 130 interrupted.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
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
*) usage_error "unknown argument: $1 (see --help)" ;;
esac

NS=idpbench
AGENTS=(idpbench-node-0 idpbench-node-1 idpbench-node-2)
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
# nonroot), and podrun, the pods' sandbox process.
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
}

# start_pod POD starts the agent pod POD as the kubelet would (but for
# the runtime: Docker, and no CNI): its sandbox, a container of its own
# network namespace (podrun pause); nginx on 127.0.0.1:NGINX_PORT in that
# namespace, logging every request (the step's target: a pod reaches no
# loopback but its own); then its container (podrun docker-args) in the
# sandbox's namespace. Records where the API server placed it in
# $RUN/placed.jsonl.
start_pod() {
	local dir="$RUN/pods/$1" sandbox="k8s_${NS}_$1_sandbox" pid args=()
	mkdir -p "$dir"
	kubectl -n "$NS" get pod "$1" -o json >"$dir/pod.json"
	# The Secret's data stays in files of the state (0600), never in argv.
	(umask 077 && kubectl -n "$NS" get secret "$(jq -r '.spec.volumes[] | select(.secret) | .secret.secretName' "$dir/pod.json")" \
		-o json >"$dir/secret.json")
	docker run --detach --pull never --name "$sandbox" --network none --user 65532:65532 \
		--entrypoint /usr/local/bin/podrun "$IMAGE" pause >/dev/null || die "the sandbox of pod $1 did not start"
	pid="$(docker inspect --format '{{.State.Pid}}' "$sandbox")"
	"$PODRUN" nginx-conf --dir "$dir/nginx" --port "$NGINX_PORT" --access-log "$dir/nginx/access.log"
	k8s_start "$STATE" "nginx-$1" nsenter --net="/proc/$pid/ns/net" nginx -p "$dir/nginx" -c "$dir/nginx/nginx.conf" -e stderr
	nsenter --net="/proc/$pid/ns/net" "$(tool runstate)" wait-http --url "$NGINX_URL" --timeout 10s \
		--pidfile "$STATE/pids/nginx-$1.pid" || die "nginx does not answer in the sandbox of pod $1: $(k8s_log_end "$STATE" "nginx-$1")"
	: >"$dir/nginx/access.log" # the wait's request is not the step's
	mapfile -d '' args < <("$PODRUN" docker-args --pod "$dir/pod.json" --secret "$dir/secret.json" --dir "$dir/volumes" \
		--network "container:$sandbox")
	((${#args[@]} > 0)) || die "pod $1 cannot run as the kubelet would run it (podrun's reason above)"
	docker run "${args[@]}" >"$dir/container" || die "docker run of pod $1 failed"
	jq -c '{pod: .metadata.name, node: .spec.nodeName, index: .metadata.annotations["batch.kubernetes.io/job-completion-index"]}' \
		"$dir/pod.json" >>"$RUN/placed.jsonl"
	log "pod $1 bound to $(jq -r .spec.nodeName "$dir/pod.json"): its sandbox, nginx and container run"
}

# end_pod POD, whose container has exited: kwok serves its log file as the
# pod's log (a Logs object) and ends the pod with its exit code.
end_pod() {
	local dir="$RUN/pods/$1" code logfile
	code="$(docker inspect --format '{{.State.ExitCode}}' "$(<"$dir/container")")"
	logfile="$(docker inspect --format '{{.LogPath}}' "$(<"$dir/container")")"
	kubectl apply -f - >/dev/null <<EOF
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata: {name: $1, namespace: $NS}
spec:
  logs:
  - containers: [loadstep]
    logsFile: $logfile
EOF
	kubectl -n "$NS" annotate pod "$1" "$K8S_EXIT_ANNOTATION=$code" >/dev/null
	touch "$dir/ended"
	log "pod $1: its container exited $code"
}

# kubelet_stand_in runs while PID (k8s-step.sh) does: it starts the
# container of each agent pod once bound and ends the pod once it exits.
kubelet_stand_in() {
	local pod state
	while kill -0 "$1" 2>/dev/null; do
		while read -r pod; do
			[[ -e "$RUN/pods/$pod/container" ]] || start_pod "$pod"
		done < <(kubectl -n "$NS" get pods -l app.kubernetes.io/name=idpbench-agent -o json 2>/dev/null |
			jq -r '.items[] | select(.spec.nodeName and (.metadata.deletionTimestamp | not)) | .metadata.name')
		for dir in "$RUN"/pods/*/; do
			[[ -e "$dir/container" && ! -e "$dir/ended" ]] || continue
			state="$(docker inspect --format '{{.State.Status}}' "$(<"$dir/container")")"
			[[ "$state" != exited ]] || end_pod "$(basename "$dir")"
		done
		sleep 1
	done
}

# run_step AGENTS NAME [containers|none] runs scripts/k8s-step.sh with
# AGENTS agents against nginx, results in $RUN/NAME, its stderr in
# $RUN/NAME.log, the stand-in kubelet beside it (none: the simulated pods
# run no container); sets STEP_RC.
run_step() {
	mkdir -p "$RUN/pods"
	: >"$RUN/placed.jsonl"
	"$IDPBENCH_ROOT/scripts/k8s-step.sh" --agents "$1" --image "$IMAGE" --namespace "$NS" \
		--url "$NGINX_URL" --scenario discovery -c "$((2 * $1))" --rate "$RATE" --warmup "${WARMUP}s" --duration 10s \
		--cpus 1 --memory 256Mi --start-in 20s --idp-label app.kubernetes.io/part-of=idp-under-test \
		--out "$RUN/$2" -- --product nginx --interval 1s --timeout 5s 2>"$RUN/$2.log" &
	STEP_PID=$!
	if [[ "${3:-containers}" == containers ]]; then kubelet_stand_in "$STEP_PID"; fi
	STEP_RC=0
	wait "$STEP_PID" || STEP_RC=$?
	STEP_PID=""
}

# left prints what of the cluster, nginx and the engine is left, one a line.
left() {
	pgrep -a -f -- "$STATE/" || true
	pgrep -a -f -- "$ENGINE/" || true
	[[ ! -e "$STATE" ]] || echo "directory $STATE"
	[[ ! -e "$ENGINE" ]] || echo "directory $ENGINE"
}

require_cmd jq curl pgrep nginx docker
start=$SECONDS
step 1 5 "the tools, podrun and the tools image $IMAGE on our Docker engine"
build_tools
dockerd_up "$ENGINE"
tools_image
PODRUN="$ENGINE/image/podrun"

step 2 5 "the control plane (Kubernetes $K8S_VERSION) and kwok's nodes"
k8s_up "$STATE"
k8s_kwok_up "$STATE" "${AGENTS[@]}" "$IDP_NODE"
RUN="$STATE/run"
mkdir -p "$RUN"
kubectl create namespace idp >/dev/null
kubectl -n idp run idp --image "$IMAGE" --restart Never --labels app.kubernetes.io/part-of=idp-under-test \
	--overrides "{\"spec\": {\"nodeName\": \"$IDP_NODE\"}}" --command -- /usr/local/bin/loadstep --help >/dev/null
kubectl -n idp wait --for condition=Ready --timeout 30s pod/idp >/dev/null || die "the IdP's pod did not run on $IDP_NODE"

step 3 5 "scripts/k8s-step.sh --agents 3 --rate $RATE, the pods' containers on the engine"
kubectl create namespace "$NS" >/dev/null
(umask 077 && random_secret >"$RUN/probe") # a file in the Secret volume: mounted, never read
kubectl -n "$NS" create secret generic idpbench-agent --from-file=probe="$RUN/probe" >/dev/null
run_step 3 three
((STEP_RC == 0)) || die "k8s-step.sh --agents 3 failed (exit $STEP_RC): $(tail -n 5 "$RUN/three.log")"
merged="$RUN/three/discovery-c6-r$RATE-n3.json"
served="$(cat "$RUN"/pods/*/nginx/access.log | wc -l)"
jq -e --argjson served "$served" '.agents == 3 and .status == "complete" and .ok == .requests and
	.requests == $served - ((.rate_rps * .warmup_s) | ceil)' "$merged" >/dev/null ||
	die "merged step: $(jq -c '{agents, status, requests, ok, rate_rps, warmup_s}' "$merged"), want 3 agents, complete, and nginx's $served requests less rate x warmup"
jq -s -e --arg idp "$IDP_NODE" '(map(.index) | sort) == ["0", "1", "2"] and (map(.node) | unique | length) == 3 and
	all(.node != $idp)' "$RUN/placed.jsonl" >/dev/null ||
	die "the agents' placement: $(jq -s -c . "$RUN/placed.jsonl"), want indexes 0, 1, 2, each on a node of its own, none on $IDP_NODE"
log "merged: $(jq -r '"\(.requests) requests of 3 agents"' "$merged") = nginx's $served less the warmup's $((RATE * WARMUP)); placed: $(jq -s -r 'map("\(.index)@\(.node)") | join(" ")' "$RUN/placed.jsonl")"
[[ -z "$(kubectl -n "$NS" get jobs,pods -o name)" ]] || die "left after k8s-step.sh: $(kubectl -n "$NS" get jobs,pods -o name | tr '\n' ' ')"
kubectl -n "$NS" delete secret idpbench-agent >/dev/null
[[ -z "$(kubectl -n "$NS" get secrets -o name)" ]] || die "the Secret is left after its deletion"

step 4 5 "scripts/k8s-step.sh --agents 4 on three free nodes: refused at the start time"
kubectl -n "$NS" create secret generic idpbench-agent --from-file=probe="$RUN/probe" >/dev/null
rm -rf "$RUN/pods"
run_step 4 four none
((STEP_RC == 1)) || die "k8s-step.sh --agents 4: exit $STEP_RC, want 1 (an agent pending on the anti-affinity)"
grep -q "didn't match pod anti-affinity rules" "$RUN/four.log" ||
	die "k8s-step.sh --agents 4 does not name the scheduler's anti-affinity: $(tail -n 5 "$RUN/four.log")"
log "refused: $(grep -m1 -o "agents not running at the start time.*" "$RUN/four.log" | cut -c1-160)..."
[[ -z "$(kubectl -n "$NS" get jobs,pods -o name)" ]] || die "left after the refused step: $(kubectl -n "$NS" get jobs,pods -o name | tr '\n' ' ')"

step 5 5 "the cluster, nginx and the engine stopped: nothing left"
docker ps -a -q | xargs -r docker rm -f >/dev/null
k8s_down "$STATE"
dockerd_down "$ENGINE"
what="$(left)"
[[ -z "$what" ]] || die "left after the cluster's and the engine's down: ${what//$'\n'/; }"
log "passed in $((SECONDS - start)) s"
