#!/usr/bin/env bash
# postgres.sh: the run's shared PostgreSQL cluster, brought up and down as a
# product is by its adapter; the run tool (internal/run) runs it, the work is
# scripts/lib/postgres.sh's.
#
#   scripts/postgres.sh up         makes a fresh directory under $IDPBENCH_TMP
#                                  (owned by the server's OS user), prints it on
#                                  stdout's first line (also when the start then
#                                  fails, so that the caller removes it), then
#                                  starts a cluster in it on a free loopback port
#   scripts/postgres.sh down DIR   stops the cluster in DIR and removes DIR;
#                                  fails naming anything left
#
#   dir="$(scripts/postgres.sh up)" && IDPBENCH_PG_DIR="$dir" products/hydra/adapter up "$state"
#
# Its settings, users and state:
# docs/design-reference.md#the-shared-postgresql.
#
# Exit codes: 0 ok, 1 a failure (the reason logged), 2 usage error.
set -o errexit -o nounset -o pipefail
# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.sh"
script_version "$@"

case "${1:-}" in
-h | --help) script_help && exit 0 ;;
up)
	(($# == 1)) || usage_error "up takes no argument"
	dir="$(pg_make_dir)"
	printf '%s\n' "$dir"
	pg_up "$dir"
	;;
down)
	(($# == 2)) || usage_error "down wants DIR, the cluster's directory"
	IDPBENCH_PG_DIR="$2" pg_down
	;;
*) usage_error "unknown argument ${1:-(none)}: want up or down DIR (--help)" ;;
esac
