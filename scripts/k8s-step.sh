#!/usr/bin/env bash
# k8s-step.sh: one load step measured by N loadstep agents on Kubernetes (an
# Indexed Job, deploy/kubernetes), their records merged: builds the tools and
# runs k8sstep (cmd/k8sstep) with the same arguments.
#
#   scripts/k8s-step.sh --agents N --url URL --scenario S -c C --image REF [flags]
#                       [-- LOADSTEP-ARGS...]
#
# The flags are k8sstep's; `scripts/k8s-step.sh --help` prints them, after the
# build. Results go to results/k8s of this repository by default (--out).
# Exit codes: 0 ok, 1 failure, 2 usage, 130 interrupted.
#
#   scripts/k8s-step.sh --agents 4 --image registry.example/idpbench-tools:TAG \
#     --url http://idp/ --scenario discovery -c 64 --render-only   # the manifest, no cluster
#
# Rules and records: docs/design.md#scaling-out.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=k8s-step

build_tools
exec "$(tool k8sstep)" "$@"
