#!/usr/bin/env bash
# test-compose.sh: compose mode for real: Hydra and Keycloak in containers on a
# Docker engine of our own, through run-comparison.sh, with the images
# scripts/lib/images.sh prepares (the official ones where the engine pulls
# them, else local equivalents, cached between runs).
#
#   scripts/test-compose.sh
#
# 1. The engine of scripts/lib/dockerd.sh (DOCKER_HOST exported, so
#    run-comparison.sh uses it and leaves it up).
# 2. IDPBENCH_MODE=compose run-comparison.sh --quick --only hydra,keycloak,
#    scenario discovery only (IDPBENCH_SCENARIOS), results in a temporary
#    directory.
# 3. Checked, for each product: its meta is ok, in compose mode, and names
#    the image of every container by ID (sha256), official or local with the
#    image it stands for; facts were read back (through the containers'
#    database and endpoints); cold starts A and B complete; the sampler's
#    container source gave the product's container memory; discovery steps
#    with requests; then nothing of ours on the engine: no container, no
#    volume, no network but the engine's own (host, none).
# 4. The engine stopped (dockerd_down), also on failure or interrupt.
#
# As root (dockerd). Builds the tools, the Compose command and the images when
# they are not cached (first time: about 4 + 5 minutes on 2 cores).
# Exit codes: 0 all of it passes, 1 a failure, 2 a bad argument, 130 interrupted.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/dockerd.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dockerd.sh"
export IDPBENCH_LOG_TAG=test-compose

case "${1:-}" in
"") ;;
-h | --help)
	script_help
	exit 0
	;;
*) usage_error "unknown argument: $1 (see --help)" ;;
esac

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

step 1 3 "a Docker engine of our own"
dockerd_up "$STATE"

step 2 3 "compose-mode quick comparison of Hydra and Keycloak (discovery)"
IDPBENCH_NO_BUILD=1 IDPBENCH_MODE=compose IDPBENCH_RESULTS="$WORK/results" IDPBENCH_SCENARIOS=discovery \
	"$IDPBENCH_ROOT/scripts/run-comparison.sh" --quick --only hydra,keycloak --run-id compose-test --fresh ||
	die "run-comparison.sh in compose mode failed (above)"

step 3 3 "the records, and nothing of ours left on the engine"
run="$WORK/results/compose-test"
for p in hydra keycloak; do
	jq -e '.status == "ok" and .settings.mode == "compose" and (.images | length) > 0 and
		all(.images[]; (.id | test("^sha256:[0-9a-f]{64}$")) and
			(.origin == "official" or (.origin == "local" and (.stands_for | length) > 0)))' \
		"$run/$p/meta.json" >/dev/null || die "$p: the meta does not name the images that ran: $(jq -c '{status, images}' "$run/$p/meta.json")"
	jq -e 'any(.facts[]; .source == "read")' "$run/$p/meta.json" >/dev/null ||
		die "$p: no fact read back from the running containers"
	for mode in A B; do
		jq -e --arg m "$mode" '.status == "complete" and .mode == $m' "$run/$p/coldstart-$mode.json" >/dev/null ||
			die "$p: cold start $mode not complete"
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
