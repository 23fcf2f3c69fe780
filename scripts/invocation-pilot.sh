#!/usr/bin/env bash
# invocation-pilot.sh: how much of a product's throughput noise is between
# fresh invocations rather than between windows of one? Builds the tools and
# execs `experiment invocations` (cmd/experiment, internal/experiment): its
# flags, environment, outputs and exit codes are this script's
# (scripts/invocation-pilot.sh --help).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=invocation-pilot

build_tools
exec "$(tool experiment)" invocations "$@"
