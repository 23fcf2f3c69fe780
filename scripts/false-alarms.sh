#!/usr/bin/env bash
# false-alarms.sh: how often `aggregate compare` calls an unchanged target
# changed. Builds the tools and execs `experiment false-alarms` (cmd/experiment,
# internal/experiment): its flags, environment, outputs and exit codes are this
# script's (scripts/false-alarms.sh --help).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=false-alarms

build_tools
exec "$(tool experiment)" false-alarms "$@"
