#!/usr/bin/env bash
# run-comparison.sh: the whole comparison, the products round by round.
#
#   scripts/run-comparison.sh [--quick] [--fresh] [--only P[,P]] [--run-id ID] ...
#
# Builds the tools (unless IDPBENCH_NO_BUILD is set) and execs the run tool
# (cmd/run, internal/run), which does the rest: its flags, environment, exit
# codes and records are this script's (scripts/run-comparison.sh --help).
# docs/design.md#the-scripts.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=run

if [[ -n "${IDPBENCH_NO_BUILD:-}" ]]; then
	log "IDPBENCH_NO_BUILD set: using the tools already in $IDPBENCH_BIN"
else
	build_tools
fi
exec "$(tool run)" "$@"
