#!/usr/bin/env bash
# bench.sh: loadstep against wrk, same targets, same run (internal/bench).
#
#   scripts/bench.sh [bench flags...]
#
# Installs wrk and nginx-light from the OS packages when missing (as root),
# builds the tools and the reference OP, then runs `bench` with the flags given
# and prints markdown tables on stdout. The flags are bench's: -c, --duration,
# --rounds, --engines, --targets, --rate, --rate-conns, --rss-conns,
# --raw FILE (every run's figures as JSON lines), --metrics-overhead;
# `scripts/bench.sh --help` prints them (after the build; nothing installed).
#
# Environment: IDPBENCH_CACHE, IDPBENCH_BIN. Exit codes: bench's (0 ok, 1
# failure, 2 usage, 130 interrupted); 1 when the install or the build fails.
#
#   scripts/bench.sh -c 16,128 --duration 5s --rounds 3 \
#     --raw results/bench/bench.jsonl >results/bench/bench.md   # the README's run
#   scripts/bench.sh --metrics-overhead --engines epoll -c 16,128 --duration 5s --rounds 10 \
#     --raw results/bench/metrics-overhead.jsonl >results/bench/metrics-overhead.md
#
# Rules and records: docs/design.md#command-lines (bench), results/bench/.
set -o errexit -o nounset -o pipefail
# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=bench

# --help: this header, then bench's own flags (built; nothing installed)
case "${1:-}" in -h | --help) script_help && build_tools && exec "$(tool bench)" --help ;; esac

ensure_pkg wrk wrk
ensure_pkg nginx nginx-light
build_tools
"$IDPBENCH_ROOT/scripts/products/refop" install >&2
cd "$IDPBENCH_ROOT"
exec "$(tool bench)" --loadstep "$(tool loadstep)" --refop "$IDPBENCH_CACHE/bin/refop-v3.52.0-idpbench" "$@"
