#!/usr/bin/env bash
# gcjitter.sh: the GC-jitter run of one running product.
# It builds the tools and runs the gcjitter tool (cmd/gcjitter); `scripts/gcjitter.sh --help`
# prints its flags, environment, exit codes and an example.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
build_tools
exec "$(tool gcjitter)" "$@"
