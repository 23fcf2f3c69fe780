#!/usr/bin/env bash
# k8s-step.sh: one load step measured by N loadstep agents on Kubernetes, their
# records merged. Builds the tools and execs `k8sstep` (cmd/k8sstep): its flags,
# exit codes and examples are this script's (scripts/k8s-step.sh --help).
# Results go to results/k8s of this repository by default (--out).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=k8s-step

build_tools
exec "$(tool k8sstep)" "$@"
