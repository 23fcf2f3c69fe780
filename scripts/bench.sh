#!/usr/bin/env bash
# bench.sh: loadstep against wrk, same targets, same run (cmd/bench/internal/bench).
#
#   scripts/bench.sh [bench flags...]
#
# Installs wrk and nginx-light from the OS packages when missing (as root),
# builds the tools and the reference OP, then runs `bench` with the flags given;
# markdown tables on stdout. `scripts/bench.sh --help` prints bench's flags and
# exit codes (after the build; nothing installed). docs/load-generator.md's run:
#
#   scripts/bench.sh -c 16,128 --duration 5s --rounds 3 \
#     --raw results/bench/bench.jsonl >results/bench/bench.md
#
# Rules and records: docs/design-reference.md#command-lines (bench), results/bench/.
set -o errexit -o nounset -o pipefail
# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
export IDPBENCH_LOG_TAG=bench

# --help: this header, then bench's own flags (built; nothing installed)
case "${1:-}" in -h | --help) script_help && build_tools && exec "$(tool bench)" --help ;; esac

ensure_pkg wrk wrk
ensure_pkg nginx nginx-light
build_tools
"$IDPBENCH_ROOT/products/refop/adapter" install >&2
# install's stable link to what it built (products/refop/adapter, REFOP_LINK)
refop="$IDPBENCH_CACHE/bin/refop-$("$IDPBENCH_ROOT/products/refop/adapter" version)-idpbench"
cd "$IDPBENCH_ROOT"
exec "$(tool bench)" --loadstep "$(tool loadstep)" --refop "$refop" "$@"
