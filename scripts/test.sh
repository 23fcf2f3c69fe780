#!/usr/bin/env bash
# test.sh: every test of idpbench, against real servers it starts itself.
#
#   scripts/test.sh [--unit] [--keep]
#
#   --unit   static checks, Go tests and fuzz only (tests that need a real server
#            skip themselves; those that start nginx run when it is installed)
#   --keep   keep the integration run's directory (logged at the end)
#
# Phases, each logged as "=== NAME": static checks (the tools built, then
# `devtest static`: gofmt, go vet, bash -n, shellcheck; its --help says
# how); deploy/kubernetes's tests; a Docker engine of our own
# (scripts/test-dockerd.sh: a local image FROM scratch on 127.0.0.1, a kill -9
# and the cleanup after it; its checks are the script's); compose mode
# (scripts/test-compose.sh --only hydra: the Compose command and the local
# images built or loaded from the cache, a compose-mode quick comparison
# killed with kill -9 and run again, nothing of ours left); the reference OP
# and Hydra on PostgreSQL; go test -race -p 1 ./... with
# IDPBENCH_INTEGRATION=1; every fuzz target 3 s; jwt-bearer and
# private_key_jwt on the reference OP; its fresh start; internal/runtest's
# TestPlacement, TestRounds, TestExampleProduct, TestKillRun; the Zitadel
# adapter on a stand-in; the quick comparison; req/CPU-s against /proc;
# TestCheckOIDC. Each other phase's checks are internal/e2e's TestE2E<Phase>.
#
# Environment: IDPBENCH_CACHE (products installed or built on first use, then
# cached), IDPBENCH_TMP, ZITADEL_BIN. As root it installs what it needs from the
# OS packages (PostgreSQL, jq, curl, shellcheck, gcc, nginx, docker.io);
# otherwise it fails naming it.
#
# Exit codes: 0 when all of it passes, 1 a failure, 2 an unknown argument,
# 130 interrupted.
#
#   scripts/test.sh --unit     # no servers
#   scripts/test.sh --keep
#
# Rules and records: docs/design-reference.md#the-scripts (test.sh, the loopback tests).
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
script_version "$@"
# shellcheck source=SCRIPTDIR/lib/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.sh"
# shellcheck source=SCRIPTDIR/../products/zitadel/proto.sh
source "$(dirname "${BASH_SOURCE[0]}")/../products/zitadel/proto.sh"
# shellcheck source=SCRIPTDIR/lib/dockerd.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/dockerd.sh"
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
	*) usage_error "unknown argument: $arg" ;;
	esac
done

WORK=""
REFOP_STATE=""
HYDRA_STATE=""
DOCKERD_STATE=""
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	# test-dockerd.sh's engine, when its phase did not finish (a subshell: dockerd_down dies on failure)
	[[ -n "$DOCKERD_STATE" ]] && { (dockerd_down "$DOCKERD_STATE") || rc=1; }
	[[ -n "$HYDRA_STATE" ]] && { "$IDPBENCH_ROOT/products/hydra/adapter" down "$HYDRA_STATE" || rc=1; }
	[[ -n "$REFOP_STATE" ]] && { "$IDPBENCH_ROOT/products/refop/adapter" down "$REFOP_STATE" || rc=1; }
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
ensure_pkg jq jq
ensure_pkg curl curl
ensure_pkg shellcheck shellcheck
build_tools
cd "$IDPBENCH_ROOT"
"$(tool devtest)" static # gofmt, go vet, bash -n, shellcheck: devtest static --help
IDPBENCH_ZITADEL_PROTO="$(zitadel_proto_dir)" # Zitadel's API definitions, for the Go tests
export IDPBENCH_ZITADEL_PROTO

phase "deploy/kubernetes: the agents' manifests rendered and decoded strictly (no cluster)"
(cd deploy/kubernetes && go test -count=1 ./...)

if ((UNIT_ONLY)); then
	phase "go test -race (unit only)"
	go test -race -count=1 -p 1 ./...
	phase "fuzz targets, 3 s each"
	"$IDPBENCH_ROOT/scripts/fuzz.sh" --time 3s
	exit 0
fi

phase "a Docker engine of our own: a local image FROM scratch answering on 127.0.0.1, a kill -9 and the cleanup after it"
DOCKERD_STATE="$(dockerd_state_dir)"
"$IDPBENCH_ROOT/scripts/test-dockerd.sh"
DOCKERD_STATE=""

phase "compose mode for real: Hydra in containers on our engine, a kill -9 of the run and its rerun, nothing left"
"$IDPBENCH_ROOT/scripts/test-compose.sh" --only hydra # its checks are the script's (--help)

phase "servers for the integration tests"
ensure_pkg gcc gcc
ensure_pkg nginx nginx-light # the Go tests start their own (internal/nginxtest)
WORK="$(make_tmpdir idpbench-test)"
for p in refop hydra; do "$IDPBENCH_ROOT/products/$p/adapter" install; done
pg_up "$(pg_make_dir)"
REFOP_STATE="$WORK/refop"
"$IDPBENCH_ROOT/products/refop/adapter" up "$REFOP_STATE"
HYDRA_STATE="$WORK/hydra"
"$IDPBENCH_ROOT/products/hydra/adapter" up "$HYDRA_STATE"
"$IDPBENCH_ROOT/products/hydra/adapter" setup "$HYDRA_STATE"
# PostgreSQL on loopback only; a server beyond loopback refused by the adapters
e2e 'PostgresLoopback|BeyondLoopback'

phase "go test -race ./... (unit and integration)"
# shellcheck source=/dev/null # a product's state.env, written by state_set
state() { (source "$1/state.env" && printf '%s\n' "${!2}"); }
# The reference OP's service key (jwt-bearer, private_key_jwt), in the module it is built from:
# not a dependency of idpbench, so asked of the module system here, outside the repository's module.
refop_version="$("$IDPBENCH_ROOT/products/refop/adapter" version)"
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
phase "adding a product: the example (products/example, one folder and one registry line) measured like any product"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 15m -run '^TestExampleProduct$' ./internal/runtest

phase "the Zitadel adapter's native mode with a stand-in binary"
e2e ZitadelNative # on the shared PostgreSQL (IDPBENCH_PG_DIR)

# The comparison brings up its own PostgreSQL and products: stop ours first.
"$IDPBENCH_ROOT/products/hydra/adapter" down "$HYDRA_STATE"
HYDRA_STATE=""
"$IDPBENCH_ROOT/products/refop/adapter" down "$REFOP_STATE"
REFOP_STATE=""
pg_down
unset IDPBENCH_PG_DIR

phase "kill -9 of a run, then the same command: nothing of the first run is left"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 15m -run '^TestKillRun$' ./internal/runtest

phase "quick comparison: refop, hydra, keycloak, zitadel, spring, nodeoidc"
IDPBENCH_RESULTS="$WORK/results" "$IDPBENCH_ROOT/scripts/run-comparison.sh" --quick --fresh \
	--only refop,hydra,keycloak,zitadel,spring,nodeoidc --run-id test
IDPBENCH_E2E_RUN="$WORK/results/test" e2e QuickRun

phase "requests per CPU-second: the sampler's figure for a refop step against /proc's"
REFOP_STATE="$WORK/efficiency/refop"
"$IDPBENCH_ROOT/products/refop/adapter" up "$REFOP_STATE"
refop_url="$(state "$REFOP_STATE" ISSUER)"
IDPBENCH_REFOP_URL="$refop_url" IDPBENCH_REFOP_PIDFILE="$REFOP_STATE/pids/refop.pid" e2e Efficiency
"$IDPBENCH_ROOT/products/refop/adapter" down "$REFOP_STATE"
REFOP_STATE=""

phase "the generic oidc adapter on Hydra, Keycloak and the reference OP"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 60m -run '^TestCheckOIDC$' ./internal/runtest
phase "all tests passed"
