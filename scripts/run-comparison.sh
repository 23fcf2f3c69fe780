#!/usr/bin/env bash
# run-comparison.sh: the whole comparison, the products round by round.
#
#   scripts/run-comparison.sh [--quick] [--fresh] [--only P[,P]] [--run-id ID] ...
#   IDPBENCH_MODE=compose scripts/run-comparison.sh --quick --only hydra,keycloak
#
# Builds the tools (unless IDPBENCH_NO_BUILD is set) and runs the run tool
# (cmd/run, internal/run), which does the rest: its flags, environment, exit
# codes and records are this script's (scripts/run-comparison.sh --help).
# --help prints the run tool's help at once, nothing built: it is kept beside
# this script (lib/run-comparison.help; internal/run's TestHelpFile holds it
# equal to the tool's). --version prints the tree's revision.
#
# Compose mode asked for (IDPBENCH_MODE=compose) where no Docker engine
# answers: it starts one of its own (scripts/lib/dockerd.sh: Debian's
# docker.io, its state under IDPBENCH_TMP, DOCKER_HOST pointing at it) and
# stops it at the end, kill -9 included (the next run's claim cleans it).
# In compose mode it also makes sure of a Compose command
# (compose_cli_install) and of the images (images_prepare: the official ones
# where the engine pulls them, else local equivalents,
# scripts/lib/images.sh). docs/design-reference.md#the-scripts.
set -o errexit -o nounset -o pipefail

for arg in "$@"; do
	case "$arg" in
	-h | --help)
		cat "$(dirname "${BASH_SOURCE[0]}")/lib/run-comparison.help"
		exit 0
		;;
	esac
done

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
# shellcheck source=SCRIPTDIR/lib/compose.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/compose.sh"
# shellcheck source=SCRIPTDIR/lib/dockerd.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dockerd.sh"
# shellcheck source=SCRIPTDIR/lib/images.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/images.sh"
export IDPBENCH_LOG_TAG=run

build_tools
mode="$(idpbench_mode)"
if [[ "$mode" != compose ]]; then
	exec "$(tool run)" "$@"
fi

ENGINE=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n "$ENGINE" ]]; then dockerd_down "$ENGINE" || rc=1; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

export IDPBENCH_MODE=compose
if ! docker_engine; then
	ENGINE="$(dockerd_state_dir)"
	log "compose mode and no Docker engine answers: starting one of our own"
	dockerd_up "$ENGINE"
fi
compose_cli_install
# The images of the run's products (--only's; without it, every product with a
# local image recipe, products/*/local): the run tool checks the names.
only=()
for ((i = 1; i <= $#; i++)); do
	case "${!i}" in
	--only)
		j=$((i + 1))
		IFS=, read -r -a only <<<"${!j:-}"
		;;
	--only=*)
		v="${!i}"
		IFS=, read -r -a only <<<"${v#--only=}"
		;;
	esac
done
images_prepare "${only[@]}"
"$(tool run)" "$@"
