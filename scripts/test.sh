#!/usr/bin/env bash
# test.sh: every test of idpbench, against real servers it starts itself.
#
#   scripts/test.sh [--unit] [--keep]
#
#   --unit   static checks and Go tests only (the integration pass is skipped,
#            and Go tests that need a real server skip themselves; those that
#            start nginx run when it is installed)
#   --keep   keep the integration run's results directory (printed at the end)
#
# 1. static: gofmt, go vet, bash -n and shellcheck (default severity) on every script
# 1b. deploy/kubernetes (its own module): the agents' Indexed Job and the
#    overlays k8sstep (cmd/k8sstep) writes, rendered in process by kustomize's
#    library and decoded strictly into the Kubernetes types; no cluster
# 2. servers: the reference OP, and Ory Hydra on a throwaway PostgreSQL, started
#    by the product adapters (installed or built on first use, then cached in
#    ~/.cache/idpbench); PostgreSQL and both products listen on loopback only,
#    and the adapters refuse a server that listens beyond it (a python3 server
#    on 0.0.0.0 started by the generic oidc adapter)
# 3. go test -race ./... with IDPBENCH_INTEGRATION=1, so tests that need those
#    servers (or nginx) fail instead of skipping when they are missing; one
#    package at a time (-p 1), because the load generator's fidelity tests time
#    a 5 ms server to a tenth of a millisecond and 2 cores shared with other
#    test binaries starve them. Among them the tools against nginx and fixed
#    service-time servers on loopback (internal/nginxtest): the driver-limited
#    flag, a target killed mid-step, compare on real measurements, 3 agents.
#    internal/e2e's TestE2E* are the checks of this script's phases: each runs
#    at its phase (e2e below), not here; internal/runtest's tests skip there,
#    each runs at its own point below (IDPBENCH_RUNTEST=1)
# 3b. scripts/fuzz.sh --time 3s: every Go fuzz target for 3 s (the --unit
#    pass runs it after its go test too); the longer run is
#    scripts/fuzz.sh --time 5m
# 4. jwt-bearer grants and private_key_jwt introspection (the calls of
#    Zitadel's S2j and S3) against the reference OP, through mintpool and
#    loadstep, with zero errors; tampered client assertions must all get 401
# 4a. the reference OP's fresh start before a load step: a new process and an
#    empty store after load that issued tokens, the same process after a step
#    that only read; Hydra's fresh is a no-op
# 4f. TestPlacement (internal/runtest): a run pinned apart (--driver-cpus,
#    --server-cpus): the reference OP's process tree and PostgreSQL on one CPU,
#    loadstep and the sampler on the other, read from /proc while it runs; the
#    meta's placement; bad placements exit 2 naming the flag
# 4h. TestRounds (internal/runtest): a run of refop and oidc in 2 rounds: the
#    windows of round 1 of both before round 2 of either, each product up and
#    idle between its rounds, the metas' rounds and the report's line
# 4i. the Zitadel adapter's native mode on a stand-in binary: how it starts
#    one (config, masterkey, PAT, both cold starts, meta, down)
# 4d. TestKillRun (internal/runtest): kill -9 of a real run's process group
#    mid-step, then the same command again: nothing of the first run is left
#    (its processes, ports, temp directories, unfinished writes), a recorded
#    pid whose start time does not match is left alone, and the rerun completes
# 5. the quick comparison (scripts/run-comparison.sh --quick) on
#    refop,hydra,keycloak (Keycloak from Maven Central, run on a JDK >= 21),
#    its run directory checked by internal/e2e (TestE2EQuickRun, through
#    internal/report's loader and `aggregate steady`'s rows): Hydra's and Keycloak's S1 S2
#    S3 S4 S5 S6, Keycloak's S2l and the reference OP's (and its S2j) have
#    numbers with zero failed requests at the steady step; that Hydra's and
#    the reference OP's S2l are N/A (their userinfo answers a client's token
#    without a sub); that the steady cells of a scenario share one check and
#    no step counts a 4xx or 5xx as ok; that the metas carry the facts read
#    from the running products (Keycloak's Argon2id, Hydra's PBKDF2, every
#    version) and Hydra's known discovery bottleneck; that cold start, memory
#    and GC-jitter records exist; that each product's meta names its
#    listeners, read from /proc, all on loopback; and Zitadel's rows: N/A with the reason
#    without ZITADEL_BIN and a Docker engine, asserted like the others'
#    with either
# 5b. a refop step's req/CPU-s (from the sampler) is within 10% of ok / the
#    CPU seconds /proc says refop spent (TestE2EEfficiency)
# 6. TestCheckOIDC (internal/runtest): the generic oidc adapter, configured
#    by a file only, measures Hydra, Keycloak and the reference OP
# The checks of phases 2, 4, 4a, 4i, 5 and 5b are Go tests in internal/e2e,
# given the servers' URLs, state directories and files in their environment.
# Installs what it needs from the OS packages when run as root (PostgreSQL,
# jq, gcc, nginx) and fails naming what is missing otherwise. Exit 0 only when all
# of it passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.sh"
# shellcheck source=SCRIPTDIR/lib/zitadel-proto.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/zitadel-proto.sh"
export IDPBENCH_LOG_TAG=test

UNIT_ONLY=0
KEEP=0
for arg in "$@"; do
	case "$arg" in
	--unit) UNIT_ONLY=1 ;;
	--keep) KEEP=1 ;;
	-h | --help)
		script_help
		exit 0
		;;
	*) die "unknown argument: $arg (see --help)" ;;
	esac
done

WORK=""
REFOP_STATE=""
HYDRA_STATE=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	[[ -n "$HYDRA_STATE" ]] && { "$IDPBENCH_ROOT/scripts/products/hydra" down "$HYDRA_STATE" || rc=1; }
	[[ -n "$REFOP_STATE" ]] && { "$IDPBENCH_ROOT/scripts/products/refop" down "$REFOP_STATE" || rc=1; }
	if [[ -n "${IDPBENCH_PG_DIR:-}" ]]; then pg_down || rc=1; fi
	if [[ -n "$WORK" ]]; then
		if ((KEEP)); then log "kept $WORK"; else rm -rf "$WORK"; fi
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM


phase() { log "=== $*"; }

# e2e NAME: internal/e2e's TestE2E<NAME> (NAME may be A|B), the checks of a
# phase, given what it needs in its environment (VAR=value e2e NAME); it
# fails naming what is missing.
e2e() {
	IDPBENCH_INTEGRATION=1 go test -count=1 -v -run "^TestE2E($1)\$" ./internal/e2e
}

phase "static checks"
require_cmd go
ensure_pkg jq jq
ensure_pkg curl curl
cd "$IDPBENCH_ROOT"
unformatted="$(find . -name '*.go' -not -path './.git/*' -print0 | xargs -0 gofmt -l)"
[[ -z "$unformatted" ]] || die "gofmt would change: $unformatted"
go vet ./...
(cd deploy/refop && go vet ./...) # the reference OP's main: its own module, outside ./...
(cd deploy/kubernetes && go vet ./...) # the Kubernetes manifests' tests: their own module too
shell_files=(scripts/*.sh scripts/lib/*.sh scripts/products/*)
for f in "${shell_files[@]}"; do
	bash -n "$f" || die "syntax error in $f"
done
# Static analysis: shellcheck at its default severity (style and up), following every source;
# a finding fails the tests, named by file and line
ensure_pkg shellcheck shellcheck
shellcheck -x "${shell_files[@]}" >&2 ||
	die "shellcheck reports findings in scripts/ (above)"
log "ok: shellcheck $(shellcheck --version | sed -n 's/^version: //p'): nothing to report in scripts/"
IDPBENCH_ZITADEL_PROTO="$(zitadel_proto_dir)" # Zitadel's API definitions, for the Go tests
export IDPBENCH_ZITADEL_PROTO

phase "deploy/kubernetes: the agents' manifests rendered and decoded strictly (no cluster)"
(cd deploy/kubernetes && go test -count=1 ./...)

if ((UNIT_ONLY)); then
	phase "go test -race (unit only)"
	go test -race -count=1 -p 1 ./...
	zitadel_defs_ran
	phase "fuzz targets, 3 s each"
	"$IDPBENCH_ROOT/scripts/fuzz.sh" --time 3s
	exit 0
fi

phase "servers for the integration tests"
ensure_pkg gcc gcc
ensure_pkg nginx nginx-light # the Go tests start their own (internal/nginxtest)
WORK="$(make_tmpdir idpbench-test)"
build_tools
for p in refop hydra; do "$IDPBENCH_ROOT/scripts/products/$p" install; done
pg_up "$(pg_make_dir)"
pg_addrs="$(pg_listeners)"
REFOP_STATE="$WORK/refop"
"$IDPBENCH_ROOT/scripts/products/refop" up "$REFOP_STATE"
HYDRA_STATE="$WORK/hydra"
"$IDPBENCH_ROOT/scripts/products/hydra" up "$HYDRA_STATE"
"$IDPBENCH_ROOT/scripts/products/hydra" setup "$HYDRA_STATE"
# PostgreSQL on loopback only; a server beyond loopback refused by the adapters
IDPBENCH_PG_LISTENERS="$pg_addrs" e2e 'PostgresLoopback|BeyondLoopback'

phase "go test -race ./... (unit and integration)"
# shellcheck source=/dev/null # a product's state.env, written by state_set
state() { (source "$1/state.env" && printf '%s\n' "${!2}"); }
# The reference OP's service key (jwt-bearer, private_key_jwt), in the module it is built from:
# not a dependency of idpbench, so asked of the module system here, outside the repository's module.
refop_version="$("$IDPBENCH_ROOT/scripts/products/refop" version)"
refop_mod="$(cd / && go mod download -json "github.com/zitadel/oidc/v3@$refop_version" | jq -er .Dir)" ||
	die "cannot locate github.com/zitadel/oidc/v3@$refop_version in the module cache (go mod download failed)"
refop_url="$(state "$REFOP_STATE" ISSUER)"
refop_key="$refop_mod/example/server/service-key1.pem"
IDPBENCH_INTEGRATION=1 \
	IDPBENCH_REFOP_URL="$refop_url" \
	IDPBENCH_REFOP_KEY="$refop_key" \
	IDPBENCH_PG_DSN="$(pg_dsn postgres)" \
	IDPBENCH_HYDRA_PUBLIC="$(state "$HYDRA_STATE" ISSUER)" \
	IDPBENCH_HYDRA_ADMIN="$(state "$HYDRA_STATE" ADMIN_URL)" \
	IDPBENCH_HYDRA_CLIENT_ID=bench-svc \
	IDPBENCH_HYDRA_CLIENT_SECRET_FILE="$HYDRA_STATE/secrets/bench-svc" \
	go test -race -count=1 -p 1 -skip '^TestE2E' ./...
zitadel_defs_ran

phase "fuzz targets, 3 s each"
"$IDPBENCH_ROOT/scripts/fuzz.sh" --time 3s

phase "jwt-bearer grants and private_key_jwt introspection against the reference OP"
IDPBENCH_REFOP_URL="$refop_url" IDPBENCH_REFOP_KEY="$refop_key" e2e RefopGrants

phase "the reference OP's fresh start before a load step: an empty store after load that issued tokens"
IDPBENCH_REFOP_STATE="$REFOP_STATE" IDPBENCH_HYDRA_STATE="$HYDRA_STATE" e2e RefopFresh
phase "placement: the load generator and the product (with its PostgreSQL) on disjoint CPU sets"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 15m -run '^TestPlacement$' ./internal/runtest
phase "rounds: round r of every product before round r+1 of any, each product up between its rounds"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 15m -run '^TestRounds$' ./internal/runtest

phase "the Zitadel adapter's native mode with a stand-in binary"
e2e ZitadelNative # on the shared PostgreSQL (IDPBENCH_PG_DIR)

# The comparison brings up its own PostgreSQL and products: stop ours first.
"$IDPBENCH_ROOT/scripts/products/hydra" down "$HYDRA_STATE"
HYDRA_STATE=""
"$IDPBENCH_ROOT/scripts/products/refop" down "$REFOP_STATE"
REFOP_STATE=""
pg_down
unset IDPBENCH_PG_DIR

phase "kill -9 of a run, then the same command: nothing of the first run is left"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 15m -run '^TestKillRun$' ./internal/runtest

phase "quick comparison: refop, hydra, keycloak, zitadel"
IDPBENCH_RESULTS="$WORK/results" "$IDPBENCH_ROOT/scripts/run-comparison.sh" --quick --fresh \
	--only refop,hydra,keycloak,zitadel --run-id test
IDPBENCH_E2E_RUN="$WORK/results/test" e2e QuickRun

phase "requests per CPU-second: the sampler's figure for a refop step against /proc's"
REFOP_STATE="$WORK/efficiency/refop"
"$IDPBENCH_ROOT/scripts/products/refop" up "$REFOP_STATE"
refop_url="$(state "$REFOP_STATE" ISSUER)"
IDPBENCH_REFOP_URL="$refop_url" IDPBENCH_REFOP_PIDFILE="$REFOP_STATE/pids/refop.pid" e2e Efficiency
"$IDPBENCH_ROOT/scripts/products/refop" down "$REFOP_STATE"
REFOP_STATE=""

phase "the generic oidc adapter on Hydra, Keycloak and the reference OP"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 60m -run '^TestCheckOIDC$' ./internal/runtest
phase "all tests passed"
