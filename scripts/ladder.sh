#!/usr/bin/env bash
# ladder.sh: the connection ladder of one scenario on one running product.
# It builds the tools and runs the ladder tool (cmd/ladder); `scripts/ladder.sh --help` prints its
# flags, environment, exit codes and an example.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
build_tools
exec "$(tool ladder)" "$@"
