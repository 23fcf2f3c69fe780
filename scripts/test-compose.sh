#!/usr/bin/env bash
# test-compose.sh: compose mode for real: products in containers on a Docker
# engine of our own, through run-comparison.sh, with the images
# scripts/lib/images.sh prepares (the official ones where the engine pulls
# them, else local equivalents, cached between runs).
#
#   scripts/test-compose.sh [--only P[,P]]
#
#   --only P[,P]  the products to run in containers (default hydra,keycloak;
#                 scripts/test.sh runs hydra)
#
# 1. The engine of scripts/lib/dockerd.sh (DOCKER_HOST exported, so
#    run-comparison.sh uses it and leaves it up).
# 2. A kill -9: IDPBENCH_MODE=compose run-comparison.sh --quick --only P,
#    scenario discovery only (IDPBENCH_SCENARIOS), results in a temporary
#    directory, killed (its whole process group) as soon as a container of
#    the first product runs; the containers it started stay on the engine.
# 3. The same command again, which must down what the killed run left in
#    compose mode first (the product's adapter down on its state) and
#    complete.
# 4. Checked, for each product: its meta is ok, in compose mode, and names
#    the image of every container by ID (sha256), official or local with the
#    image it stands for; facts were read back (through the containers'
#    database and endpoints); cold starts A and B complete, their peak the
#    product's containers' memory (not the database's); the sampler's
#    container source gave the product's container memory; discovery steps
#    with requests; then nothing of ours on the engine: no container, no
#    volume, no network but the engine's own (host, none).
# 5. The engine stopped (dockerd_down), also on failure or interrupt.
#
# As root (dockerd). Builds the tools, the Compose command and the images when
# they are not cached (first time: about 4 + 5 minutes on 2 cores; Hydra's
# images alone about 2.5).
# Exit codes: 0 all of it passes, 1 a failure, 2 a bad argument, 130 interrupted.
#
#   scripts/test-compose.sh
#   scripts/test-compose.sh --only hydra
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
# shellcheck source=SCRIPTDIR/lib/dockerd.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dockerd.sh"
export IDPBENCH_LOG_TAG=test-compose

ONLY=hydra,keycloak
while (($#)); do
	case "$1" in
	--only)
		(($# >= 2)) || usage_error "--only wants a list of products, e.g. --only hydra"
		ONLY="$2"
		shift 2
		;;
	--only=*)
		ONLY="${1#--only=}"
		shift
		;;
	-h | --help)
		script_help
		exit 0
		;;
	*) usage_error "unknown argument: $1" ;;
	esac
done
IFS=, read -r -a PRODUCTS <<<"$ONLY"
((${#PRODUCTS[@]} > 0)) || usage_error "--only: no product in '$ONLY'"
for p in "${PRODUCTS[@]}"; do
	[[ -f "$IDPBENCH_ROOT/products/$p/compose.yml" ]] ||
		usage_error "--only: $p has no compose file (products/$p/compose.yml)"
done

STATE="$(dockerd_state_dir)"
WORK=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	dockerd_down "$STATE" || rc=1
	if [[ -n "$WORK" ]]; then rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

build_tools
require_cmd jq
WORK="$(make_tmpdir idpbench-test-compose)"
start=$SECONDS

step 1 4 "a Docker engine of our own"
dockerd_up "$STATE"

# compare: the compose-mode quick comparison of the products, discovery only.
compare() {
	IDPBENCH_NO_BUILD=1 IDPBENCH_MODE=compose IDPBENCH_RESULTS="$WORK/results" IDPBENCH_SCENARIOS=discovery \
		"$IDPBENCH_ROOT/scripts/run-comparison.sh" --quick --only "$ONLY" --run-id compose-test --fresh
}

step 2 4 "kill -9 of a compose-mode comparison ($ONLY) once a container of ${PRODUCTS[0]} runs"
setsid bash -c "$(declare -f compare); $(declare -p WORK ONLY); compare" >"$WORK/killed.log" 2>&1 &
victim=$!
deadline=$((SECONDS + 900)) # the first time it builds the Compose command and the images
until [[ -n "$(docker ps -q --filter "name=^idpbench-${PRODUCTS[0]}" --filter status=running)" ]]; do
	kill -0 "$victim" 2>/dev/null || die "the comparison to kill ended before a container ran (its log: $WORK/killed.log): $(tail -n 3 "$WORK/killed.log")"
	((SECONDS < deadline)) || die "no container of ${PRODUCTS[0]} running after 900 s (its log: $WORK/killed.log)"
	sleep 1
done
kill -9 -- "-$victim"
wait "$victim" 2>/dev/null || true
left="$(docker ps -a --format '{{.Names}} ({{.State}})' | tr '\n' ' ')"
# The containers outlive their killed compose command: what the rerun must clean.
[[ -n "$left" ]] || die "no container on the engine after the kill, so the rerun's cleaning would not be tested"
log "killed the comparison's process group; left on the engine: $left"

step 3 4 "the same command again: it cleans what the killed run left and completes"
compare 2>&1 | tee "$WORK/rerun.log" || die "run-comparison.sh in compose mode failed after the kill (above)"
# The run downs what the killed one left in compose mode before anything else (its own engine
# may be the user's, and a product left up may not be in the rerun).
grep -q "an earlier session left ${PRODUCTS[0]} up in compose mode" "$WORK/rerun.log" ||
	die "the rerun did not down the containers the killed run left (no such line in $WORK/rerun.log)"

step 4 4 "the records, and nothing of ours left on the engine"
run="$WORK/results/compose-test"
for p in "${PRODUCTS[@]}"; do
	jq -e '.status == "ok" and .settings.mode == "compose" and (.images | length) > 0 and
		all(.images[]; (.id | test("^sha256:[0-9a-f]{64}$")) and
			(.origin == "official" or (.origin == "local" and (.stands_for | length) > 0)))' \
		"$run/$p/meta.json" >/dev/null || die "$p: the meta does not name the images that ran: $(jq -c '{status, images}' "$run/$p/meta.json")"
	jq -e 'any(.facts[]; .source == "read")' "$run/$p/meta.json" >/dev/null ||
		die "$p: no fact read back from the running containers"
	for mode in A B; do
		jq -e --arg m "$mode" '.status == "complete" and .mode == $m' "$run/$p/coldstart-$mode.json" >/dev/null ||
			die "$p: cold start $mode not complete"
		# its peak is the product's containers' memory, not the compose client's
		jq -e --arg c "container:idpbench-$p" '.peak_measured_as == "cgroup" and .peak_rss_bytes > 0 and
			any(.peak_sources[]; . == $c) and all(.peak_sources[]; endswith("-postgres") | not)' \
			"$run/$p/coldstart-$mode.json" >/dev/null ||
			die "$p: cold start $mode's peak is not the product's containers': $(jq -c '{peak_rss_bytes, peak_measured_as, peak_sources}' "$run/$p/coldstart-$mode.json")"
	done
	jq -s -e --arg s "container:idpbench-$p" 'any(.[]; .source == $s and .rss_bytes > 0)' "$run/$p"/samples-*.jsonl >/dev/null ||
		die "$p: the sampler's container source read no memory of idpbench-$p"
	jq -e '.status == "complete" and .requests > 0' "$run/$p/discovery-c2.json" >/dev/null ||
		die "$p: no discovery step with requests"
	log "$p: $(jq -r '[.images[] | "\(.service) \(.ref) (\(.origin))"] | join(", ")' "$run/$p/meta.json")"
done
left="$(docker ps -a -q)$(docker volume ls -q)$(docker network ls --format '{{.Name}}' | grep -vx -e host -e none || true)"
[[ -z "$left" ]] || die "left on the engine: ${left//$'\n'/ }"
log "passed in $((SECONDS - start)) s"
