#!/usr/bin/env bash
# k8s-step.sh: one load step measured by N loadstep agents on Kubernetes (an
# Indexed Job, deploy/kubernetes), their records merged: builds the tools and
# runs k8sstep (cmd/k8sstep) with the same arguments. `k8s-step.sh --help`
# lists them; results go to results/k8s of this repository by default.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=k8s-step

build_tools
exec "$(tool k8sstep)" "$@"
