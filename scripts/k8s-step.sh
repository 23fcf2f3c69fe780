#!/usr/bin/env bash
# k8s-step.sh: one load step measured by N loadstep agents on Kubernetes (an
# Indexed Job, deploy/kubernetes), their records merged by `aggregate merge`.
#
#   scripts/k8s-step.sh --agents N --url URL --scenario S -c C --image REF
#                       [--rate R] [--duration 60s] [--warmup 10s]
#                       [--namespace NS] [--secret NAME] [--cpus 2] [--memory 1Gi]
#                       [--start-in 60s | --start-at TIME] [--idp-label KEY=VALUE]...
#                       [--context CTX] [--out DIR] [--keep]
#                       [--render-only | --write-overlay DIR] [-- LOADSTEP-ARGS...]
#
#   --agents N        agents, one pod each, each on a node of its own (parallelism
#                     = completions = N); agent I runs loadstep --segment I/N
#   --url, --scenario the endpoint and scenario (loadstep --url, --scenario)
#   -c C              connections in total over the N agents (at least N); each
#                     agent opens its share (loadstep --segment)
#   --rate R          open loop: R requests/s in total, each agent its share
#   --duration, --warmup   loadstep's, in seconds or minutes (60, 60s, 2m); the
#                       warmup is fixed: agents measure one common window
#                       (loadstep refuses --start-at with --warmup-max)
#   --image REF       the tools image (deploy/kubernetes/Dockerfile), pinned by
#                     tag or digest (not :latest)
#   --namespace NS    default idpbench; one run per namespace at a time
#   --secret NAME     the Secret mounted read-only at /secrets in every agent
#                     (default idpbench-agent): pools and client secrets, named
#                     in LOADSTEP-ARGS by path (--pool /secrets/pool); it must exist
#   --cpus, --memory  per agent, requests = limits (Guaranteed QoS), whole CPUs
#   --start-in S      the agents' common start (loadstep --start-at) S seconds
#                     after submission (default 60s: scheduling and image pulls)
#   --start-at TIME   or an absolute start, RFC 3339 or Unix seconds
#   --idp-label K=V   a label of the pods the agents keep off the nodes of: the
#                     IdP's and its database's (default app.kubernetes.io/part-of=
#                     idp-under-test); repeat it for pods labelled apart, e.g. the
#                     Keycloak Operator's app.kubernetes.io/instance=NAME and the
#                     database's own label
#   --context CTX     kubectl's context (default: the current one)
#   --out DIR         results (default results/k8s): DIR/NAME.json, the merged
#                     step; DIR/NAME.agents/agent-I.json and agent-I.log, each
#                     agent's record and its pod's log; DIR/NAME.job.yaml, the
#                     manifest applied. NAME is SCENARIO-cC[-rR]-nN. A complete
#                     DIR/NAME.json is not measured again.
#   --keep            leave the Job and its pods (the next run refuses until
#                     they are deleted; the command is printed)
#   --render-only     print the manifest (kubectl kustomize; no cluster needed)
#   --write-overlay DIR  write the kustomize overlay into DIR and stop (no kubectl)
#   LOADSTEP-ARGS     more loadstep flags (--client-id, --pool, --product ...);
#                     files must be under /secrets; the flags above and
#                     --output, --segment, --start-at, --metrics-addr are the script's
#
# What it does: renders the manifest with `kubectl kustomize` from an overlay
# it writes into a temp dir (the base, the values above); refuses when an
# earlier run's Job or pods are left in the namespace (and prints the command
# that deletes them) or the Secret is missing; `kubectl create`s the Job
# (never reuses one); waits with `kubectl wait --for=condition=complete`,
# failing early -- with the pod's log -- when an agent fails, when an agent is
# not running by the start time (the scheduler's or the kubelet's reason), or
# after the Job's deadline; takes each agent's record, the last line of its
# pod's log (cmd/podstep), by completion index; merges them with `aggregate
# merge`; and deletes the Job and its pods on exit (unless --keep).
# Needs kubectl and jq; aggregate from $IDPBENCH_BIN, else PATH, else built.
# Exit 0 ok (or already complete), 1 failure, 2 usage, 130 interrupted.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=k8s-step

BASE="$IDPBENCH_ROOT/deploy/kubernetes/base"
JOB=idpbench-agents                       # metadata.name in the base
AGENT_SELECTOR=app.kubernetes.io/name=idpbench-agent # the agents' label in the base
SECRET_DIR=/secrets                       # the Secret's mountPath in the base

usage_error() {
	log "error: $*"
	log "see scripts/k8s-step.sh --help"
	exit 2
}

# seconds_of FLAG VALUE prints VALUE ("90", "90s", "2m") in seconds.
seconds_of() {
	[[ "$2" =~ ^([0-9]+)(s|m)?$ ]] || usage_error "$1 $2: want seconds or minutes (60, 60s, 2m)"
	local n=$((10#${BASH_REMATCH[1]}))
	[[ "${BASH_REMATCH[2]}" == m ]] && n=$((n * 60))
	printf '%s\n' "$n"
}

# json_string S prints S as a JSON string literal (YAML reads JSON); a
# control character is a usage error, not an escape.
json_string() {
	[[ "$1" != *[[:cntrl:]]* ]] || usage_error "a value holds a control character: $(printf '%q' "$1")"
	printf '%s' "$(jq -cn --arg s "$1" '$s')"
}

# json_array S... prints the strings as a JSON array.
json_array() {
	local s
	for s in "$@"; do
		[[ "$s" != *[[:cntrl:]]* ]] || usage_error "a value holds a control character: $(printf '%q' "$s")"
	done
	printf '%s' "$(jq -cn '$ARGS.positional' --args -- "$@")"
}

AGENTS="" URL="" SCENARIO="" CONNS="" RATE="" DURATION=60s WARMUP=10s
IMAGE="" NAMESPACE=idpbench SECRET=idpbench-agent CPUS=2 MEMORY=1Gi START_IN=60s START_AT=""
IDP_LABELS=() CONTEXT="" OUT="$IDPBENCH_ROOT/results/k8s"
KEEP=0 RENDER_ONLY=0 OVERLAY_DIR="" EXTRA=() START_IN_SET=0

need() { (($# >= 2)) || usage_error "$1 needs a value"; }
while (($# > 0)); do
	case "$1" in
	-h | --help) script_help && exit 0 ;;
	--agents) need "$@" && AGENTS="$2" && shift ;;
	--url) need "$@" && URL="$2" && shift ;;
	--scenario) need "$@" && SCENARIO="$2" && shift ;;
	-c | --connections) need "$@" && CONNS="$2" && shift ;;
	--rate) need "$@" && RATE="$2" && shift ;;
	--duration) need "$@" && DURATION="$2" && shift ;;
	--warmup) need "$@" && WARMUP="$2" && shift ;;
	--warmup-max) usage_error "--warmup-max: the agents measure one common window, so their warmup is fixed (loadstep refuses --start-at with an adaptive warmup); give a --warmup long enough" ;;
	--image) need "$@" && IMAGE="$2" && shift ;;
	--namespace) need "$@" && NAMESPACE="$2" && shift ;;
	--secret) need "$@" && SECRET="$2" && shift ;;
	--cpus) need "$@" && CPUS="$2" && shift ;;
	--memory) need "$@" && MEMORY="$2" && shift ;;
	--start-in) need "$@" && START_IN="$2" START_IN_SET=1 && shift ;;
	--start-at) need "$@" && START_AT="$2" && shift ;;
	--idp-label) need "$@" && IDP_LABELS+=("$2") && shift ;;
	--context) need "$@" && CONTEXT="$2" && shift ;;
	--out) need "$@" && OUT="$2" && shift ;;
	--keep) KEEP=1 ;;
	--render-only) RENDER_ONLY=1 ;;
	--write-overlay) need "$@" && OVERLAY_DIR="$2" && shift ;;
	--) shift && EXTRA=("$@") && break ;;
	*) usage_error "unknown argument: $1" ;;
	esac
	shift
done

# --- validation (every usage error exits 2 before anything is written) -------

posint() { [[ "$2" =~ ^[1-9][0-9]{0,5}$ ]] || usage_error "$1 $2: want a whole number above 0"; }
[[ -n "$AGENTS" ]] || usage_error "--agents N is required"
posint --agents "$AGENTS"
[[ -n "$URL" ]] || usage_error "--url URL is required"
[[ "$URL" =~ ^https?://[[:graph:]]+$ ]] || usage_error "--url $URL: want an http:// or https:// URL"
[[ -n "$SCENARIO" ]] || usage_error "--scenario is required"
[[ "$SCENARIO" =~ ^[a-z_]+$ ]] || usage_error "--scenario $SCENARIO: not a scenario name"
[[ " ${IDPBENCH_SCENARIO_NAMES[*]} request " == *" $SCENARIO "* ]] ||
	usage_error "--scenario $SCENARIO: want one of ${IDPBENCH_SCENARIO_NAMES[*]} request"
[[ -n "$CONNS" ]] || usage_error "-c C (connections over all agents) is required"
posint -c "$CONNS"
((CONNS >= AGENTS)) || usage_error "-c $CONNS: fewer connections than --agents $AGENTS (each agent needs at least one)"
if [[ -n "$RATE" ]]; then
	[[ "$RATE" =~ ^[0-9]+(\.[0-9]+)?$ && ! "$RATE" =~ ^0+(\.0+)?$ ]] || usage_error "--rate $RATE: want requests/s above 0"
fi
DURATION_S="$(seconds_of --duration "$DURATION")"
((DURATION_S > 0)) || usage_error "--duration $DURATION: want a window above 0"
WARMUP_S="$(seconds_of --warmup "$WARMUP")"
posint --cpus "$CPUS"
[[ "$MEMORY" =~ ^[1-9][0-9]*(Ki|Mi|Gi|Ti|k|M|G|T)?$ ]] || usage_error "--memory $MEMORY: want a Kubernetes quantity such as 1Gi or 512Mi"
dns_label='^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'
[[ "$NAMESPACE" =~ $dns_label ]] || usage_error "--namespace $NAMESPACE: not a Kubernetes namespace name"
[[ "$SECRET" =~ ^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$ ]] || usage_error "--secret $SECRET: not a Kubernetes Secret name"
if [[ -z "$IMAGE" && -z "$OVERLAY_DIR" && "$RENDER_ONLY" == 0 ]]; then
	usage_error "--image REF is required: docker build -f deploy/kubernetes/Dockerfile -t REGISTRY/idpbench-tools:TAG . and push it"
fi
IMAGE="${IMAGE:-localhost/idpbench-tools:devel}"
image_ref="${IMAGE%%@*}"
if [[ "$IMAGE" != *@sha256:* ]]; then
	[[ "${image_ref##*/}" == *:* ]] || usage_error "--image $IMAGE: pin it by tag or digest (REPO:TAG or REPO@sha256:...)"
	[[ "${image_ref##*:}" != latest ]] || usage_error "--image $IMAGE: :latest is no pin; name a version tag or a digest"
fi
[[ "$IMAGE" =~ ^[a-z0-9][a-zA-Z0-9._/:@-]*$ ]] || usage_error "--image $IMAGE: not an image reference"
((${#IDP_LABELS[@]} > 0)) || IDP_LABELS=(app.kubernetes.io/part-of=idp-under-test)
for l in "${IDP_LABELS[@]}"; do
	[[ "$l" =~ ^(([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)=([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$ ]] ||
		usage_error "--idp-label $l: want KEY=VALUE, a Kubernetes label"
done
((RENDER_ONLY == 0 || ${#OVERLAY_DIR} == 0)) || usage_error "--render-only and --write-overlay: give one"

# check_extra: LOADSTEP-ARGS must not set what the script or the base sets,
# and every file they name comes from the Secret's mount.
check_extra() {
	local i arg flag value
	for ((i = 0; i < ${#EXTRA[@]}; i++)); do
		arg="${EXTRA[i]}" flag="${arg%%=*}" value=""
		[[ "$arg" != *[[:cntrl:]]* ]] || usage_error "loadstep argument $(printf '%q' "$arg") holds a control character"
		case "$flag" in
		-o* | --output | --segment | --start-at | --metrics-addr)
			usage_error "loadstep argument $arg: the agents' $flag is set by deploy/kubernetes" ;;
		--url | --scenario | -c* | --connections | --rate | --duration | --warmup | --warmup-max)
			usage_error "loadstep argument $arg: give $flag to k8s-step.sh itself, before --" ;;
		--pool | --client-secret-file | --client-assertion-pool | --password-file | --login-client-pat-file)
			if [[ "$arg" == *=* ]]; then value="${arg#*=}"; else
				((i + 1 < ${#EXTRA[@]})) || usage_error "loadstep argument $arg needs a value"
				i=$((i + 1)) value="${EXTRA[i]}"
			fi
			[[ "$value" == "$SECRET_DIR"/?* && "$value" != *..* ]] ||
				usage_error "loadstep argument $flag $value: the agents read secrets and pools only from the Secret $SECRET, mounted at $SECRET_DIR (e.g. $flag $SECRET_DIR/pool)" ;;
		--hlog | --server-metrics | --server-metrics-out)
			warn "loadstep argument $arg: its files stay in the pod and are not collected" ;;
		esac
	done
}
check_extra

# The start: the warmup of every agent begins there (loadstep --start-at).
printf -v NOW '%(%s)T' -1
((START_IN_SET == 0 || ${#START_AT} == 0)) || usage_error "--start-in and --start-at: give one"
if [[ -n "$START_AT" ]]; then
	if [[ "$START_AT" =~ ^[0-9]{9,11}$ ]]; then
		START_EPOCH="$START_AT"
	elif [[ "$START_AT" =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$ ]]; then
		START_EPOCH="$(date -u -d "$START_AT" +%s 2>/dev/null)" || usage_error "--start-at $START_AT: not a time"
	else
		usage_error "--start-at $START_AT: want RFC 3339 (2026-01-02T15:04:05Z) or Unix seconds"
	fi
else
	START_IN_S="$(seconds_of --start-in "$START_IN")"
	START_EPOCH=$((NOW + START_IN_S))
	START_AT="$(date -u -d "@$START_EPOCH" +%Y-%m-%dT%H:%M:%SZ)"
fi
LEAD_S=$((START_EPOCH > NOW ? START_EPOCH - NOW : 0))
# The Job's deadline: the lead, the warmup, the window, then the
# drain (loadstep --timeout, 10 s by default) and a margin for the pods' start.
DEADLINE_S=$((LEAD_S + WARMUP_S + DURATION_S + 120))

NAME="$SCENARIO-c$CONNS${RATE:+-r$RATE}-n$AGENTS"

# --- the overlay: the base plus this step's values ---------------------------

# loadstep_args prints the step's own loadstep arguments as a JSON array.
loadstep_args() {
	local args=("--url=$URL" "--scenario=$SCENARIO" "--connections=$CONNS" "--warmup=${WARMUP_S}s" "--duration=${DURATION_S}s")
	[[ -z "$RATE" ]] || args+=("--rate=$RATE")
	json_array "${args[@]}" "${EXTRA[@]}"
}

# relpath FROM TO prints the path of directory TO relative to directory
# FROM (kustomize takes a base by a relative path only).
relpath() {
	local from to up="" rest
	from="$(cd "$1" && pwd -P)" to="$(cd "$2" && pwd -P)"
	while [[ "$to" != "$from" && "$to" != "${from%/}"/* ]]; do
		from="${from%/*}" up+="../"
		[[ -n "$from" ]] || from=/
	done
	rest="${to#"$from"}" rest="${rest#/}"
	printf '%s\n' "${up}${rest:-.}"
}

# write_overlay DIR writes kustomization.yaml and its two patches into DIR.
write_overlay() {
	local dir="$1"
	mkdir -p "$dir"
	cat >"$dir/kustomization.yaml" <<EOF
# Written by scripts/k8s-step.sh for $NAME, start $START_AT.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: $NAMESPACE
resources:
  - $(json_string "$(relpath "$dir" "$BASE")")
patches:
  - path: job.json
  - path: idp-label.json
    target:
      kind: Job
      name: $JOB
EOF
	cat >"$dir/job.json" <<EOF
{
  "apiVersion": "batch/v1",
  "kind": "Job",
  "metadata": {"name": "$JOB"},
  "spec": {
    "parallelism": $AGENTS,
    "completions": $AGENTS,
    "activeDeadlineSeconds": $DEADLINE_S,
    "template": {"spec": {
      "containers": [{
        "name": "loadstep",
        "image": $(json_string "$IMAGE"),
        "args": $(loadstep_args),
        "env": [
          {"name": "IDPBENCH_AGENTS", "value": "$AGENTS"},
          {"name": "IDPBENCH_START_AT", "value": $(json_string "$START_AT")}
        ],
        "resources": {
          "requests": {"cpu": "$CPUS", "memory": "$MEMORY"},
          "limits": {"cpu": "$CPUS", "memory": "$MEMORY"}
        }
      }],
      "volumes": [{"name": "secrets", "secret": {"secretName": "$SECRET"}}]
    }}
  }
}
EOF
	# The first anti-affinity term is the IdP's ("test" fails the render if
	# the base's order changed); more labels are terms of their own before
	# the agents' term (the scheduler keeps every term: off every such node).
	local terms=/spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution i
	{
		printf '[\n  {"op": "test", "path": "%s/0/labelSelector/matchLabels/app.kubernetes.io~1part-of", "value": "idp-under-test"}' "$terms"
		printf ',\n  {"op": "replace", "path": "%s/0/labelSelector/matchLabels", "value": %s}' "$terms" "$(label_json "${IDP_LABELS[0]}")"
		for ((i = 1; i < ${#IDP_LABELS[@]}; i++)); do
			printf ',\n  {"op": "add", "path": "%s/%d", "value": {"labelSelector": {"matchLabels": %s}, "namespaceSelector": {}, "topologyKey": "kubernetes.io/hostname"}}' \
				"$terms" "$i" "$(label_json "${IDP_LABELS[i]}")"
		done
		printf '\n]\n'
	} >"$dir/idp-label.json"
}

# label_json KEY=VALUE prints {"KEY": "VALUE"}.
label_json() {
	printf '{%s: %s}' "$(json_string "${1%%=*}")" "$(json_string "${1#*=}")"
}

require_cmd jq # the overlay's JSON values, then the records
if [[ -n "$OVERLAY_DIR" ]]; then
	write_overlay "$OVERLAY_DIR"
	log "wrote the overlay for $NAME (start $START_AT) into $OVERLAY_DIR; render it with: kubectl kustomize $OVERLAY_DIR"
	exit 0
fi

require_cmd kubectl
KC=(kubectl)
[[ -z "$CONTEXT" ]] || KC+=(--context "$CONTEXT")
KC+=(--namespace "$NAMESPACE")

WORK="" CREATED=0
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if ((CREATED)); then
		if ((KEEP)); then
			log "kept the Job; delete it with: ${KC[*]} delete job $JOB --cascade=foreground --wait"
		elif ! "${KC[@]}" delete job "$JOB" --cascade=foreground --wait=true --timeout=120s --ignore-not-found >&2; then
			warn "could not delete the Job; delete it with: ${KC[*]} delete job $JOB --cascade=foreground --wait"
			rc=1
		fi
	fi
	[[ -z "$WORK" ]] || rm -rf "$WORK"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
WORK="$(make_tmpdir idpbench-k8s)"
write_overlay "$WORK/overlay"
kubectl kustomize "$WORK/overlay" >"$WORK/job.yaml"
if ((RENDER_ONLY)); then
	cat "$WORK/job.yaml"
	exit 0
fi

# --- the run -------------------------------------------------------------------

AGENTS_DIR="$OUT/$NAME.agents"
if step_complete "$OUT/$NAME.json"; then
	log "$OUT/$NAME.json is complete already: nothing to do (remove it to measure again)"
	exit 0
fi
if [[ -x "$IDPBENCH_BIN/aggregate" ]]; then
	AGGREGATE="$IDPBENCH_BIN/aggregate"
elif command -v aggregate >/dev/null 2>&1; then
	AGGREGATE="$(command -v aggregate)"
else
	build_tools
	AGGREGATE="$(tool aggregate)"
fi
((LEAD_S <= 3600)) || die "the start $START_AT is more than an hour away"
((LEAD_S >= 10)) || die "the start $START_AT is $((NOW - START_EPOCH)) s past or less than 10 s away: the agents would refuse it (--start-in, --start-at)"
TOTAL=5

step 1 "$TOTAL" "checking namespace $NAMESPACE for an earlier run and the Secret $SECRET"
leftovers="$("${KC[@]}" get jobs,pods -l "$AGENT_SELECTOR" -o name)" || die "kubectl cannot list jobs and pods in namespace $NAMESPACE"
if [[ -n "$leftovers" ]]; then
	die "an earlier run's agents are left in namespace $NAMESPACE: $(tr '\n' ' ' <<<"$leftovers")-- inspect them (${KC[*]} logs ...) or delete them: ${KC[*]} delete jobs,pods -l $AGENT_SELECTOR --cascade=foreground --wait"
fi
"${KC[@]}" get secret "$SECRET" -o name >/dev/null ||
	die "no Secret $SECRET in namespace $NAMESPACE: create it with the files LOADSTEP-ARGS name, e.g. ${KC[*]} create secret generic $SECRET --from-file=client-secret=FILE --from-file=pool=POOL (an empty one for scenarios without secrets)"

step 2 "$TOTAL" "creating Job $JOB: $AGENTS agents, $SCENARIO -c $CONNS${RATE:+ --rate $RATE}, start $START_AT (in $LEAD_S s), deadline $DEADLINE_S s"
mkdir -p "$AGENTS_DIR"
rm -f "$AGENTS_DIR"/agent-*.json "$AGENTS_DIR"/agent-*.log # an earlier, unfinished attempt's
cp "$WORK/job.yaml" "$OUT/$NAME.job.yaml"
"${KC[@]}" create -f "$WORK/job.yaml" >&2
CREATED=1

# pods prints "INDEX NAME PHASE" for every agent pod.
pods() {
	"${KC[@]}" get pods -l "$AGENT_SELECTOR" -o json |
		jq -r '.items[] | [.metadata.annotations["batch.kubernetes.io/job-completion-index"] // "?", .metadata.name, .status.phase] | @tsv'
}

# save_logs: every agent pod's log into AGENTS_DIR/agent-I.log, the last
# lines of the failed ones on stderr.
save_logs() {
	local idx name phase
	while IFS=$'\t' read -r idx name phase; do
		"${KC[@]}" logs "$name" >"$AGENTS_DIR/agent-$idx.log" 2>&1 || true
		if [[ "$phase" == Failed ]]; then
			log "agent $idx (pod $name) failed: $("${KC[@]}" get pod "$name" -o json | jq -r '[.status.containerStatuses[]?.state.terminated | select(.) | "exit \(.exitCode) \(.reason // "")"] | join(", ")'); the end of its log:"
			tail -n 20 "$AGENTS_DIR/agent-$idx.log" >&2
		fi
	done < <(pods)
}

# check_started: by the start time every agent runs (or has run); a pod
# still pending would start late, and loadstep refuses a start it missed.
check_started() {
	local n pending
	n="$(pods | wc -l)"
	pending="$("${KC[@]}" get pods -l "$AGENT_SELECTOR" -o json | jq -r '.items[] | select(.status.phase == "Pending") |
		"\(.metadata.name): \([(.status.conditions[]? | select(.status == "False") | .message // .reason), (.status.containerStatuses[]?.state.waiting | select(.) | "\(.reason): \(.message // "")")] | map(select(.)) | join("; "))"')"
	[[ -z "$pending" ]] || die "agents not running at the start time $START_AT (start them earlier with --start-in, or free nodes: each agent needs a node of its own without the IdP): $pending"
	((n == AGENTS)) || die "$n of $AGENTS agent pods exist at the start time $START_AT"
}

# conditions prints the Job's true conditions (Complete, Failed, ...).
conditions() {
	"${KC[@]}" get job "$JOB" -o json | jq -r '[.status.conditions[]? | select(.status == "True") | .type] | join(" ")'
}

step 3 "$TOTAL" "waiting for the $AGENTS agents (start $START_AT, then $WARMUP_S s warmup and $DURATION_S s)"
started=0 deadline=$((SECONDS + DEADLINE_S + 60))
until "${KC[@]}" wait --for=condition=complete "job/$JOB" --timeout=10s >/dev/null 2>&1; do
	state="$(conditions)" || die "Job $JOB is gone from namespace $NAMESPACE"
	if [[ " $state " == *" Failed "* || " $state " == *" FailureTarget "* ]]; then
		save_logs
		die "Job $JOB failed ($state); the agents' logs are in $AGENTS_DIR"
	fi
	printf -v now '%(%s)T' -1
	if ((!started && now >= START_EPOCH + 5)); then
		check_started
		started=1
		log "all $AGENTS agents are running"
	fi
	if ((SECONDS >= deadline)); then
		save_logs
		die "Job $JOB has not completed $((DEADLINE_S + 60)) s after its creation; the agents' logs are in $AGENTS_DIR"
	fi
done

step 4 "$TOTAL" "collecting the agents' records (the last line of each pod's log)"
files=()
mapfile -t rows < <(pods)
for ((i = 0; i < AGENTS; i++)); do
	mine=()
	for row in "${rows[@]}"; do
		IFS=$'\t' read -r idx name phase <<<"$row"
		[[ "$idx" == "$i" && "$phase" == Succeeded ]] && mine+=("$name")
	done
	((${#mine[@]} == 1)) || die "completion index $i: ${#mine[@]} succeeded pods, want 1 (${mine[*]})"
	"${KC[@]}" logs "${mine[0]}" >"$AGENTS_DIR/agent-$i.log"
	tail -n 1 "$AGENTS_DIR/agent-$i.log" >"$AGENTS_DIR/agent-$i.json"
	jq -e 'type == "object" and (.schema | startswith("idpbench.step/"))' "$AGENTS_DIR/agent-$i.json" >/dev/null 2>&1 ||
		die "agent $i (pod ${mine[0]}): the last line of its log is no step record ($AGENTS_DIR/agent-$i.log)"
	log "agent $i: $("$AGGREGATE" summary "$AGENTS_DIR/agent-$i.json")"
	files+=("$AGENTS_DIR/agent-$i.json")
done

step 5 "$TOTAL" "merging the $AGENTS records into $OUT/$NAME.json"
"$AGGREGATE" merge -o "$OUT/$NAME.json" "${files[@]}"
log "merged: $("$AGGREGATE" summary "$OUT/$NAME.json")"
