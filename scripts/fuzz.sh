#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target of idpbench, one at a time.
#
#   scripts/fuzz.sh [--time D] [--list] [TARGET...]
#
# Builds the tools and execs `devtest fuzz` (cmd/devtest, cmd/devtest/internal/devtest)
# from the repository's root: its flags, outputs and exit codes are this
# script's; `scripts/fuzz.sh --help` explains them (how targets are found and
# run, golang/go#75804, where failing inputs go).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=fuzz

build_tools
cd "$IDPBENCH_ROOT"
exec "$(tool devtest)" fuzz "$@"
