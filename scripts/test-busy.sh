#!/usr/bin/env bash
# test-busy.sh: the Go tests on a machine kept busy: `go test -race -count=1
# -p 1 ./...` N times in a row beside a busy loop on one core.
#
#   scripts/test-busy.sh [--runs N]
#
# Builds the tools and execs `devtest busy` (cmd/devtest, cmd/devtest/internal/devtest)
# from the repository's root: its flags, outputs and exit codes are this
# script's (scripts/test-busy.sh --help).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=test-busy

build_tools
cd "$IDPBENCH_ROOT"
exec "$(tool devtest)" busy "$@"
