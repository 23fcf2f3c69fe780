#!/usr/bin/env bash
# bench.sh — loadstep against wrk, same targets, same run (see internal/bench).
#
# Usage: scripts/bench.sh [bench flags...]
#   e.g. scripts/bench.sh -c 16,128 --duration 5s --rounds 3
#        scripts/bench.sh --engines epoll --targets nginx   # loadstep engines to compare (default raw,epoll)
#        scripts/bench.sh -c 16,128 --duration 5s --rounds 3 \
#          --raw results/bench/bench.jsonl >results/bench/bench.md  # the README's run, raw figures kept
#        scripts/bench.sh --metrics-overhead --engines epoll -c 16,128 --duration 5s --rounds 10 \
#          --raw results/bench/metrics-overhead.jsonl >results/bench/metrics-overhead.md
#          # what loadstep --metrics-addr costs: CPU per request with it (scraped every 1 s) ÷ without, interleaved
# Installs wrk and nginx-light from the OS packages when missing (as root),
# builds loadstep and the reference OP, then prints markdown tables on stdout;
# --raw FILE also writes every run's figures (every round, every driver) as
# JSON lines, the numbers each median and per-round ratio is computed from.
set -o errexit -o nounset -o pipefail
# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
export IDPBENCH_LOG_TAG=bench


ensure_pkg wrk wrk
ensure_pkg nginx nginx-light
build_tools
"$IDPBENCH_ROOT/scripts/products/refop" install >&2
cd "$IDPBENCH_ROOT"
exec "$(tool bench)" --loadstep "$(tool loadstep)" --refop "$IDPBENCH_CACHE/bin/refop-v3.52.0-idpbench" "$@"
