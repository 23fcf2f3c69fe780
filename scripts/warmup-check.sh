#!/usr/bin/env bash
# warmup-check.sh: does the stability warmup rule reach the throughput a fixed
# long warmup reaches? Builds the tools and execs `experiment warmup-check`
# (cmd/experiment, internal/experiment): its flags, environment, outputs and
# exit codes are this script's (scripts/warmup-check.sh --help).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=warmup-check

build_tools
exec "$(tool experiment)" warmup-check "$@"
