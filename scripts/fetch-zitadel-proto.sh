#!/usr/bin/env bash
# fetch-zitadel-proto.sh: print the directory of Zitadel's API definitions
# (@zitadel/proto, pinned in products/zitadel/proto.sh), fetched with npm
# into the project's cache on first use.
#
#   scripts/fetch-zitadel-proto.sh [--help]
#
# Environment: IDPBENCH_CACHE (the cache). Exit codes: 0 ok, 1 the fetch failed,
# 2 a bad argument.
#
#   IDPBENCH_ZITADEL_PROTO="$(scripts/fetch-zitadel-proto.sh)" go test ./products/zitadel/...
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
# shellcheck source=SCRIPTDIR/../products/zitadel/proto.sh
source "$(dirname "${BASH_SOURCE[0]}")/../products/zitadel/proto.sh"

case "${1:-}" in
-h | --help)
	script_help
	exit 0
	;;
"") ;;
*) usage_error "unknown argument: $1" ;;
esac
zitadel_proto_dir
