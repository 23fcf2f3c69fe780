#!/usr/bin/env bash
# test.sh: every test of idpbench, against real servers it starts itself.
#
#   scripts/test.sh [--unit] [--keep]
#
#   --unit   static checks and Go tests only (the integration pass is skipped,
#            and Go tests that need a real server skip themselves)
#   --keep   keep the integration run's results directory (printed at the end)
#
# 1. static: gofmt, go vet, bash -n and shellcheck (default severity) on every script
# 1b. deploy/kubernetes (its own module): the agents' Indexed Job and the
#    overlays scripts/k8s-step.sh writes, rendered in process by kustomize's
#    library and decoded strictly into the Kubernetes types; no cluster
# 2. servers: the reference OP, and Ory Hydra on a throwaway PostgreSQL, started
#    by the product adapters (installed or built on first use, then cached in
#    ~/.cache/idpbench); PostgreSQL and both products listen on loopback only,
#    and the adapters refuse a server that listens beyond it
# 3. go test -race ./... with IDPBENCH_INTEGRATION=1, so tests that need those
#    servers fail instead of skipping when they are missing; one package at a
#    time (-p 1), because the load generator's fidelity tests time a 5 ms
#    server to a tenth of a millisecond and 2 cores shared with other test
#    binaries starve them; internal/runtest's tests skip there, each runs at
#    its own point below (IDPBENCH_RUNTEST=1)
# 3b. scripts/fuzz.sh --time 3s: every Go fuzz target for 3 s (the --unit
#    pass runs it after its go test too); the longer run is
#    scripts/fuzz.sh --time 5m
# 4. jwt-bearer grants and private_key_jwt introspection (the calls of
#    Zitadel's S2 and S3) against the reference OP, through mintpool and
#    loadstep, with zero errors; tampered client assertions must all get 401
#    and the Zitadel adapter's native mode started on a stand-in binary
# 4b. scripts/test-driver-limited.sh: a starved driver is flagged, a 5 ms server is not
# 4c. scripts/test-target-lost.sh: nginx killed mid-step gives a target_lost step,
#    refused connects counted apart from requests, an idle driver, a rerun
# 4e. scripts/test-compare.sh: aggregate compare on real measurements -- a
#    5 ms server measured twice passes the gate, 5 ms -> 10 ms fails it on qps
#    (lower) and p50 (higher); results/reference against itself is ~
# 4g. scripts/agents.sh: 3 local loadstep agents run one step as a Kubernetes
#    Job's pods would (one --start-at, --segment I/3), merged: rate mode
#    3 x 1,000 requests/s for 10 s is 30,000 +-1% requests, exactly nginx's
#    count of the window, the histogram count the agents' sum; closed loop
#    3 x c=8 is one c=24 step; a gap is refused
# 4f. TestPlacement (internal/runtest): a run pinned apart (--driver-cpus,
#    --server-cpus): the reference OP's process tree and PostgreSQL on one CPU,
#    loadstep and the sampler on the other, read from /proc while it runs; the
#    meta's placement; bad placements exit 2 naming the flag
# 4h. TestRounds (internal/runtest): a run of refop and oidc in 2 rounds: the
#    windows of round 1 of both before round 2 of either, each product up and
#    idle between its rounds, the metas' rounds and the report's line
# 4d. TestKillRun (internal/runtest): kill -9 of a real run's process group
#    mid-step, then the same command again: nothing of the first run is left
#    (its processes, ports, temp directories, unfinished writes), a recorded
#    pid whose start time does not match is left alone, and the rerun completes
# 5. the quick comparison (scripts/run-comparison.sh --quick) on
#    refop,hydra,keycloak (Keycloak from Maven Central, run on a JDK >= 21),
#    asserting from `aggregate steady` that Hydra's and Keycloak's S1 S2
#    S3 S4 S5 S6, Keycloak's S2l and the reference OP's (and its S2j) have
#    numbers with zero failed requests at the steady step; that Hydra's and
#    the reference OP's S2l are N/A (their userinfo answers a client's token
#    without a sub); that the steady cells of a scenario share one check and
#    no step counts a 4xx or 5xx as ok; that the metas carry the facts read
#    from the running products (Keycloak's Argon2id, Hydra's PBKDF2, every
#    version) and Hydra's known discovery bottleneck; that cold start, memory
#    and GC-jitter records exist; that each product's meta names its
#    listeners, read from /proc, all on loopback; that a refop step's req/CPU-s (from the
#    sampler) is within 10% of ok / the CPU seconds /proc says refop spent; and Zitadel's rows: N/A with the reason
#    without ZITADEL_BIN and a Docker engine, asserted like the others'
#    with either
# 6. TestCheckOIDC (internal/runtest): the generic oidc adapter, configured
#    by a file only, measures Hydra, Keycloak and the reference OP
# Installs what it needs from the OS packages when run as root (PostgreSQL,
# jq, gcc) and fails naming what is missing otherwise. Exit 0 only when all
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

# loopback_only WHAT ADDRS: ADDRS (a listeners fact's value: "127.0.0.1:80
# [::1]:81 ...") is not empty and names loopback addresses only.
loopback_only() {
	jq -e -n --arg v "$2" '$v | split(" ") | length > 0 and
		all(test("^(127(\\.[0-9]{1,3}){3}|\\[::1\\]|\\[::ffff:127(\\.[0-9]{1,3}){3}\\]):[0-9]+$"))' >/dev/null ||
		die "$1: want listeners on loopback only, got \"$2\""
	log "ok: $1 listens on loopback only: $2"
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
WORK="$(make_tmpdir idpbench-test)"
build_tools
for p in refop hydra; do "$IDPBENCH_ROOT/scripts/products/$p" install; done
pg_up "$(pg_make_dir)"
loopback_only PostgreSQL "$(pg_listeners)"
REFOP_STATE="$WORK/refop"
"$IDPBENCH_ROOT/scripts/products/refop" up "$REFOP_STATE"
HYDRA_STATE="$WORK/hydra"
"$IDPBENCH_ROOT/scripts/products/hydra" up "$HYDRA_STATE"
"$IDPBENCH_ROOT/scripts/products/hydra" setup "$HYDRA_STATE"

# beyond_loopback_refused: a server that listens on every interface (a
# static discovery document served by python3 on 0.0.0.0, started by the
# generic oidc adapter) fails its up naming the socket, and down stops it.
beyond_loopback_refused() {
	local dir="$WORK/beyond" port out rc=0
	port="$(free_port)"
	mkdir -p "$dir/www/.well-known"
	printf '{"issuer": "http://127.0.0.1:%s/"}\n' "$port" >"$dir/www/.well-known/openid-configuration"
	printf '%s\n' NAME=oidc:beyond-loopback "ISSUER=http://127.0.0.1:$port/" READY_TIMEOUT_S=30 \
		"START_COMMAND=exec python3 -m http.server --bind 0.0.0.0 --directory www $port" >"$dir/beyond.env"
	out="$(IDPBENCH_OIDC_CONFIG="$dir/beyond.env" "$IDPBENCH_ROOT/scripts/products/oidc" up "$dir/state" 2>&1)" || rc=$?
	IDPBENCH_OIDC_CONFIG="$dir/beyond.env" "$IDPBENCH_ROOT/scripts/products/oidc" down "$dir/state"
	if ((rc == 0)) || ! grep -q "listens beyond loopback: 0\.0\.0\.0:$port (pid [0-9]* python3)" <<<"$out"; then
		die "a server on 0.0.0.0:$port: want its up refused naming the socket, got exit $rc: $out"
	fi
	log "ok: a server on 0.0.0.0:$port is refused after its start"
}
beyond_loopback_refused

phase "go test -race ./... (unit and integration)"
# shellcheck source=/dev/null # a product's state.env, written by state_set
state() { (source "$1/state.env" && printf '%s\n' "${!2}"); }
# The reference OP's service key (jwt-bearer, private_key_jwt), in the module it is built from:
# not a dependency of idpbench, so asked of the module system here, outside the repository's module.
refop_version="$("$IDPBENCH_ROOT/scripts/products/refop" version)"
refop_mod="$(cd / && go mod download -json "github.com/zitadel/oidc/v3@$refop_version" | jq -er .Dir)" ||
	die "cannot locate github.com/zitadel/oidc/v3@$refop_version in the module cache (go mod download failed)"
IDPBENCH_INTEGRATION=1 \
	IDPBENCH_REFOP_URL="$(state "$REFOP_STATE" ISSUER)" \
	IDPBENCH_REFOP_KEY="$refop_mod/example/server/service-key1.pem" \
	IDPBENCH_PG_DSN="$(pg_dsn postgres)" \
	IDPBENCH_HYDRA_PUBLIC="$(state "$HYDRA_STATE" ISSUER)" \
	IDPBENCH_HYDRA_ADMIN="$(state "$HYDRA_STATE" ADMIN_URL)" \
	IDPBENCH_HYDRA_CLIENT_ID=bench-svc \
	IDPBENCH_HYDRA_CLIENT_SECRET_FILE="$HYDRA_STATE/secrets/bench-svc" \
	go test -race -count=1 -p 1 ./...
zitadel_defs_ran

phase "fuzz targets, 3 s each"
"$IDPBENCH_ROOT/scripts/fuzz.sh" --time 3s

phase "jwt-bearer grants and private_key_jwt introspection against the reference OP"
# The calls Zitadel's S2 and S3 make (docs/products/zitadel.md), on the OP
# built on Zitadel's OIDC library: assertions signed with the example's key,
# as a pipeline of the tools. The example answers introspection by "service"
# (authenticated by its client assertion) with active:false for every token:
# it marks a token active only for callers in its audience whose subject is a
# user. So the step checks for a valid RFC 7662 answer (--introspect-check
# answered, recorded as its check: a test of client authentication, never a
# comparison cell), and a tampered assertion pool must fail every request (401).
refop_pkjwt() {
	local issuer key out="$WORK/pkjwt" step a i=0
	issuer="$(state "$REFOP_STATE" ISSUER)"
	key="$(go env GOMODCACHE)/github.com/zitadel/oidc/v3@v3.52.0/example/server/service-key1.pem"
	(umask 077 && mkdir -p "$out")
	"$(tool mintpool)" --flow jwt-bearer --key-file "$key" --kid key1 --iss service --aud "$issuer" \
		--ttl 10m -n 200 -o "$out/grants.pool"
	"$(tool loadstep)" --url "${issuer}oauth/token" --scenario jwt_bearer --pool "$out/grants.pool" --scope openid \
		-c 4 --warmup 1s --duration 3s --product refop -o "$out/jwt_bearer.json"
	jq -e '.status == "complete" and .requests > 0 and .error_rate == 0' "$out/jwt_bearer.json" >/dev/null ||
		die "jwt_bearer against the reference OP: want zero errors, got $(jq -c '{requests, errors}' "$out/jwt_bearer.json")"
	log "ok: refop jwt_bearer $(jq -r '"\(.requests) requests, \(.qps|floor)/s, errors \(.error_rate)"' "$out/jwt_bearer.json")"
	# Access tokens to introspect: 20 jwt-bearer grants.
	(umask 077 && echo "# idpbench-pool kind=access_token product=refop flow=jwt-bearer" >"$out/tokens.pool")
	while IFS= read -r a && ((i++ < 20)); do
		printf '%s' "$a" | curl -sS --fail-with-body --data scope=openid \
			--data grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer --data-urlencode assertion@- \
			"${issuer}oauth/token" | jq -er .access_token >>"$out/tokens.pool" || die "jwt-bearer grant for the token pool failed"
	done < <(grep -v '^#' "$out/grants.pool")
	"$(tool mintpool)" --flow client-assertion --key-file "$key" --kid key1 --iss service --aud "$issuer" \
		--ttl 10m -n 200 -o "$out/assertions.pool"
	for tampered in 0 1; do
		step="$out/introspect-$tampered.json"
		a="$out/assertions.pool"
		if ((tampered)); then
			# the signature's last characters replaced: the OP must refuse it
			(umask 077 && sed -E '/^#/!s/....$/AAAA/' "$a" >"$out/tampered.pool")
			a="$out/tampered.pool"
		fi
		"$(tool loadstep)" --url "${issuer}oauth/introspect" --scenario introspect --pool "$out/tokens.pool" \
			--client-auth assertion --client-assertion-pool "$a" --introspect-check answered \
			-c 4 --warmup 1s --duration 3s --product refop -o "$step"
	done
	jq -e '.status == "complete" and .requests > 0 and .error_rate == 0 and .check == "2xx json active=bool"' \
		"$out/introspect-0.json" >/dev/null ||
		die "private_key_jwt introspection against the reference OP: want zero errors, got $(jq -c '{requests, errors}' "$out/introspect-0.json")"
	jq -e '.requests > 0 and .errors.non2xx == .requests and .status_codes["401"] == .requests' "$out/introspect-1.json" >/dev/null ||
		die "private_key_jwt introspection with tampered assertions: want every request refused with 401, got $(jq -c '{requests, errors, status_codes}' "$out/introspect-1.json")"
	log "ok: refop introspect (private_key_jwt) $(jq -r '"\(.requests) requests, \(.qps|floor)/s, errors \(.error_rate)"' "$out/introspect-0.json"); tampered assertions: all 401"
}
refop_pkjwt

phase "the reference OP's fresh start before a load step: an empty store after load that issued tokens"
# ladder.sh and gcjitter.sh call the adapter's fresh before every step. refop,
# which never frees a token it issued, starts again when the load since its
# start issued tokens (unknown at first: it does), and the pools of its own
# tokens go with the old process; after a step that only read it stays up.
# A no-op for a product without product_fresh.
refop_fresh() {
	local a="$IDPBENCH_ROOT/scripts/products/refop" pidfile="$REFOP_STATE/pids/refop.pid" before after tok url code stat
	"$a" setup "$REFOP_STATE" # the login page's credentials (the integration tests needed only up)
	url="$("$a" endpoint "$REFOP_STATE" userinfo)"
	userinfo_code() { printf 'header = "Authorization: Bearer %s"\n' "$1" | curl -sS -o /dev/null -w '%{http_code}' --config - "$url"; }
	mint_one() {
		"$a" pools "$REFOP_STATE" userinfo 2 "$REFOP_STATE/pools/userinfo.pool"
		tok="$(grep -v '^#' "$REFOP_STATE/pools/userinfo.pool" | head -n1)"
		[[ "$(userinfo_code "$tok")" == 200 ]] || die "refop userinfo with a token just minted: want 200"
	}
	# 1. Nothing recorded about the load since the start: it starts again.
	mint_one
	before="$(head -n1 "$pidfile")"
	"$a" fresh "$REFOP_STATE" userinfo
	after="$(head -n1 "$pidfile")"
	[[ "$after" != "$before" ]] || die "refop fresh (first step): still the process $before"
	# Gone, or a zombie its new parent has not reaped yet (coldstart, which
	# started it, has exited).
	stat="$(ps -o stat= -p "$before" 2>/dev/null || true)"
	[[ -z "$stat" || "$stat" == Z* ]] || die "refop fresh: the old process $before still runs ($stat)"
	[[ ! -e "$REFOP_STATE/pools/userinfo.pool" ]] || die "refop fresh: the pool of the old process's tokens is still there"
	code="$(userinfo_code "$tok")"
	[[ "$code" == 401 || "$code" == 403 ]] || die "refop userinfo with a token of the old process answered $code, want 401 or 403 (an empty store)"
	"$a" health "$REFOP_STATE" >/dev/null || die "refop fresh: not healthy after the fresh start"
	# 2. After a step that only read (userinfo), and before one that issues: it stays up, its pool valid.
	mint_one
	"$a" fresh "$REFOP_STATE" client_credentials
	[[ "$(head -n1 "$pidfile")" == "$after" && -s "$REFOP_STATE/pools/userinfo.pool" && "$(userinfo_code "$tok")" == 200 ]] ||
		die "refop fresh after a userinfo step: want the same process ($after) and its pool still valid"
	# 3. After a step that issued tokens (client_credentials): it starts again.
	"$a" fresh "$REFOP_STATE" introspect
	[[ "$(head -n1 "$pidfile")" != "$after" ]] || die "refop fresh after a client_credentials step: still the process $after"
	"$IDPBENCH_ROOT/scripts/products/hydra" fresh "$HYDRA_STATE" userinfo || die "hydra fresh: want a no-op, it failed"
	kill -0 "$(head -n1 "$HYDRA_STATE/pids/hydra.pid")" || die "hydra fresh: Hydra no longer runs"
	log "ok: refop fresh: a new process, its old token refused ($code), after a first step and after client_credentials; the same after userinfo; hydra fresh: a no-op"
}
refop_fresh
phase "driver-limited flag: a starved driver is flagged, a 5 ms server is not"
IDPBENCH_NO_BUILD=1 "$IDPBENCH_ROOT/scripts/test-driver-limited.sh"
phase "a target killed mid-step: target_lost, refused connects no requests, no spinning, measured again on resume"
IDPBENCH_NO_BUILD=1 "$IDPBENCH_ROOT/scripts/test-target-lost.sh"
phase "aggregate compare: the same target twice passes, 5 ms -> 10 ms is flagged with the right sign"
IDPBENCH_NO_BUILD=1 "$IDPBENCH_ROOT/scripts/test-compare.sh"
phase "agents: 3 loadstep agents with one --start-at and --segment I/3 merge to one whole step, as nginx counted it"
IDPBENCH_NO_BUILD=1 "$IDPBENCH_ROOT/scripts/agents.sh"
phase "placement: the load generator and the product (with its PostgreSQL) on disjoint CPU sets"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 15m -run '^TestPlacement$' ./internal/runtest
phase "rounds: round r of every product before round r+1 of any, each product up between its rounds"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 15m -run '^TestRounds$' ./internal/runtest

phase "the Zitadel adapter's native mode with a stand-in binary"
# No Zitadel runs here (docs/products/zitadel.md); a stand-in
# (scripts/testdata/zitadel-standin) checks how the adapter starts one:
# generated config, masterkey from the environment only, PAT path, both cold
# starts, the meta, and down leaving nothing behind.
zitadel_native() {
	local st="$WORK/zitadel" z="$IDPBENCH_ROOT/scripts/products/zitadel" user_bin="${ZITADEL_BIN:-}"
	export ZITADEL_BIN="$IDPBENCH_ROOT/scripts/testdata/zitadel-standin" ZITADEL_STANDIN_LOG="$WORK/zitadel-standin.log"
	"$z" install
	"$z" up "$st"
	"$z" restart "$st"
	[[ "$(cut -d' ' -f1 "$ZITADEL_STANDIN_LOG" | paste -sd' ')" == "start-from-init start" ]] ||
		die "zitadel native: want start-from-init then start, got $(cat "$ZITADEL_STANDIN_LOG")"
	[[ "$(stat -c %a "$st/secrets/masterkey")" == 600 && -s "$st/secrets/zitadel-admin-sa.pat" ]] ||
		die "zitadel native: want a 0600 masterkey and the first instance's PAT in $st/secrets"
	for m in A B; do
		jq -e '.status == "complete"' "$st/coldstart-$m.json" >/dev/null || die "zitadel native: coldstart-$m.json not complete"
	done
	"$z" meta "$st" | jq -e '.settings.start | test("start-from-init")' >/dev/null || die "zitadel native: meta without the start command"
	"$z" down "$st"
	unset ZITADEL_BIN ZITADEL_STANDIN_LOG
	# A real Zitadel given by the user runs in the comparison below.
	if [[ -n "$user_bin" ]]; then export ZITADEL_BIN="$user_bin"; fi
}
zitadel_native

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
run="$WORK/results/test"
[[ -s "$run/COMPARISON.md" ]] || die "no COMPARISON.md in $run"
"$(tool aggregate)" steady "$run" >"$WORK/steady.jsonl"

# expect PRODUCT ID... : each cell has a steady step with zero failed requests.
expect() {
	local product="$1" id row
	shift
	for id in "$@"; do
		row="$(jq -c --arg p "$product" --arg id "$id" 'select(.product==$p and .id==$id)' "$WORK/steady.jsonl")"
		[[ -n "$row" ]] || die "$product $id: no row in the comparison"
		jq -e '.steady and .qps > 0 and .failed == 0' >/dev/null <<<"$row" ||
			die "$product $id: want numbers with zero errors at the steady step, got $row"
		log "ok: $product $id $(jq -r '"c=\(.c) qps=\(.qps|floor) p99=\(.p99_ms)ms failed=\(.failed)"' <<<"$row")"
	done
}
# expect_na PRODUCT ID REGEX: the cell is N/A with a reason matching REGEX.
expect_na() {
	jq -s -e --arg p "$1" --arg id "$2" --arg re "$3" 'map(select(.product==$p and .id==$id)) |
		length == 1 and (.[0].steady | not) and (.[0].reason | test($re))' "$WORK/steady.jsonl" >/dev/null ||
		die "$1 $2: want an N/A cell saying /$3/, got $(jq -c --arg p "$1" --arg id "$2" 'select(.product==$p and .id==$id)' "$WORK/steady.jsonl")"
	log "ok: $1 $2 N/A: $(jq -r --arg p "$1" --arg id "$2" 'select(.product==$p and .id==$id) | .reason' "$WORK/steady.jsonl")"
}
expect hydra S1 S2 S3 S4 S5 S6
expect keycloak S1 S2 S2l S3 S4 S5 S6
expect refop S1 S2 S2j S3 S4 S5 S6
# S2l's userinfo must answer 2xx with a sub: products that answer a client's token otherwise are N/A.
expect_na hydra S2l 'userinfo .*200 and no sub'
expect_na refop S2l 'userinfo with 403'
# One success rule per scenario: every steady cell of a scenario was judged by the same check.
jq -s -e 'map(select(.steady)) | group_by(.id) | all(map(.check) | unique | length == 1 and .[0] != "")' \
	"$WORK/steady.jsonl" >/dev/null ||
	die "steady cells of one scenario judged by different checks: $(jq -s -c 'map(select(.steady) | {product, id, check})' "$WORK/steady.jsonl")"
# No step counts a 4xx or 5xx as ok: ok never exceeds the 2xx answers (iterations: the last request's).
bad="$(jq -r 'select(.schema == "idpbench.step/v1") | select(.check != "" and
	(if .count_unit == "iteration" then .ok <= .requests_by_name[.request_order[-1]].ok
	 else .ok <= ([.status_codes | to_entries[] | select(.key | test("^2")) | .value] | add // 0) end) | not)
	| "\(input_filename): \({check, ok, status_codes} | tojson)"' "$run"/*/*.json)"
[[ -z "$bad" ]] || die "steps without their check, or with more ok than 2xx answers: $bad"
log "ok: every step records its check; none counts more ok than 2xx answers"
# Server side (issue 16): Hydra's and Keycloak's own count of a steady window agrees with
# loadstep's (within 1% plus what the window's edges explain) on at least one scenario each, from
# the raw scrapes kept beside the step (0644); the reference OP has no metrics endpoint: N/A.
# (A malformed or unreachable metrics endpoint: Go tests, cmd/loadstep and internal/report.)
for p in hydra keycloak; do
	agree="$(jq -r --arg p "$p" 'select(.product==$p and .steady and .server.agrees == true) |
		"\(.id) c=\(.c): server \(.server.requests), loadstep \(.server.loadstep_requests) (slack \(.server.slack))"' "$WORK/steady.jsonl")"
	[[ -n "$agree" ]] || die "$p: no steady cell whose server-side count agrees with loadstep's: $(jq -c --arg p "$p" 'select(.product==$p) | {id, server}' "$WORK/steady.jsonl")"
	log "ok: $p server side agrees: ${agree//$'\n'/; }"
	f="$(jq -r --arg p "$p" 'select(.product==$p and .steady and .server.agrees == true) | "\(.file | sub("[^/]*$"; ""))\(.server.start_scrape)"' "$WORK/steady.jsonl" | head -n 1)"
	[[ "$(stat -c %a "$f")" == 644 ]] || die "$p: the raw start scrape $f is missing or not mode 0644"
done
jq -s -e 'map(select(.product=="refop" and .steady and (.unit // "") != "iteration")) | length > 0 and
	all(.server.na | test("no metrics endpoint"))' "$WORK/steady.jsonl" >/dev/null ||
	die "refop: want its steady cells' server side N/A (no metrics endpoint), got $(jq -c 'select(.product=="refop") | {id, server}' "$WORK/steady.jsonl")"
grep -q '^## Server side' "$run/COMPARISON.md" || die "COMPARISON.md has no Server side section"
# The one warmup rule, the knee records and the phase table, from this real run.
jq -e -s 'map(select(.schema == "idpbench.step/v1" and .labels.phase == "ladder")) | length > 0 and
	all(.warmup_rule != null and .warmup_stable != null and .warmup_s >= .warmup_rule.min_s and .warmup_s <= .warmup_rule.max_s + 1)' \
	"$run"/*/*-c*.json >/dev/null || die "ladder steps without the adaptive warmup's record, or a warmup outside its floor and cap"
for f in "$run"/*/*-c*.json; do
	s="$(basename "$f")"
	[[ -s "$(dirname "$f")/${s%%-c*}.knee.json" ]] || die "$f: its ladder has no knee record"
done
{ [[ -s "$run/phases.jsonl" ]] && grep -q '^## Where the time goes' "$run/COMPARISON.md"; } ||
	die "no phases.jsonl or no 'Where the time goes' table in $run"
log "ok: every ladder step warmed by the rule within its floor and cap; knee records; the phase table"
# Requests per CPU-second against /proc: one refop loadstep (warmup 0: its measured window is the
# whole run) under a sampler; the report's figure for that step (aggregate efficiency, from the
# sampler's records) is within 10% of its ok requests / the CPU seconds refop's process group spent
# from just before the loadstep to just after it, read here from /proc/PID/stat (utime + stime,
# fields 14 and 15, clock ticks), not from the sampler. The two figures are set against each other,
# never against a number, so a busy machine moves both.
# proc_cpu_ticks PGID: utime and stime of every member of the process group, one number a line
# (the fields after the command name's closing parenthesis, which may hold spaces).
proc_cpu_ticks() {
	local pid
	for pid in $(group_members "$1"); do
		sed -E 's/^.*\) //' "/proc/$pid/stat" | cut -d' ' -f12,13 | tr ' ' '\n'
	done
}
efficiency_vs_proc() {
	local dir="$WORK/efficiency" pidfile pgid before after
	mkdir -p "$dir"
	REFOP_STATE="$dir/refop"
	"$IDPBENCH_ROOT/scripts/products/refop" up "$REFOP_STATE"
	pidfile="$REFOP_STATE/pids/refop.pid"
	pgid="$(head -n1 "$pidfile")"
	start_bg sampler "$dir/sampler.pid" "$dir/sampler.log" "$(tool sampler)" --pidfile "$pidfile" --name refop \
		--every 1s --host=false -o "$dir/samples.jsonl"
	sleep 2 # records before the window opens
	before="$(proc_cpu_ticks "$pgid" | jq -s add)"
	"$(tool loadstep)" --url "$(state "$REFOP_STATE" ISSUER).well-known/openid-configuration" --scenario discovery \
		-c 4 --warmup 0 --duration 20s --product refop -o "$dir/discovery.json"
	after="$(proc_cpu_ticks "$pgid" | jq -s add)"
	sleep 2 # a record after the window closes
	signal_stop "$dir/sampler.pid" INT 30 || die "the sampler did not stop cleanly (log: $dir/sampler.log)"
	"$IDPBENCH_ROOT/scripts/products/refop" down "$REFOP_STATE"
	REFOP_STATE=""
	"$(tool aggregate)" efficiency --step "$dir/discovery.json" --samples "$dir/samples.jsonl" >"$dir/efficiency.json"
	jq -e --argjson before "$before" --argjson after "$after" --argjson hz "$(getconf CLK_TCK)" \
		--slurpfile step "$dir/discovery.json" '($step[0].ok / (($after - $before) / $hz)) as $proc |
		.req_per_cpu_s != null and $proc > 0 and (.req_per_cpu_s / $proc - 1 | fabs) <= 0.10' "$dir/efficiency.json" >/dev/null ||
		die "refop discovery: req/CPU-s from the sampler $(jq -c '{req_per_cpu_s, idp_cpu_s, ok, na}' "$dir/efficiency.json"), from /proc $before -> $after ticks at $(getconf CLK_TCK)/s: want within 10%"
	log "ok: refop discovery $(jq -r --argjson b "$before" --argjson a "$after" --argjson hz "$(getconf CLK_TCK)" --slurpfile s "$dir/discovery.json" \
		'"\(.req_per_cpu_s|floor) req/CPU-s from the sampler (\(.idp_cpu_s*100|round/100) CPU-s), \($s[0].ok / (($a - $b) / $hz) | floor) from /proc (\(($a - $b) / $hz) CPU-s)"' "$dir/efficiency.json")"
}
efficiency_vs_proc
# Facts are read from the running products, not recalled.
jq -e '.facts | any(.name == "password hashing" and .source == "read" and (.value | startswith("argon2")))' \
	"$run/keycloak/meta.json" >/dev/null || die "keycloak: want the password hashing read from its database (argon2), got $(jq -c '.facts' "$run/keycloak/meta.json")"
jq -e '(.facts | any(.name == "client secret hashing" and .source == "read" and (.value | startswith("pbkdf2-sha256"))))
	and (.known | any(.ref | endswith("/issues/3863")))' "$run/hydra/meta.json" >/dev/null ||
	die "hydra: want the client secret hashing read from its database and the known discovery bottleneck (#3863)"
for p in refop hydra keycloak; do
	jq -e --arg p "$p" '.facts | any(.name == "version" and .source == "read")' "$run/$p/meta.json" >/dev/null ||
		die "$p: no version read from the running product"
	# The listeners of its process tree after its last start, read from /proc.
	jq -e '[.facts[] | select(.name == "listeners" and .source == "read" and (.from | startswith("/proc/net/tcp")))] | length == 1' \
		"$run/$p/meta.json" >/dev/null || die "$p: want one listeners fact read from /proc in its meta, got $(jq -c '.facts' "$run/$p/meta.json")"
	loopback_only "$p" "$(jq -r '.facts[] | select(.name == "listeners") | .value' "$run/$p/meta.json")"
done
grep -q 'known limit' "$run/COMPARISON.md" || die "COMPARISON.md does not mark the row a known limit shapes"
# Iteration scenarios carry their per-request-name latencies.
for p in refop hydra keycloak; do
	jq -s -e --arg p "$p" 'map(select(.product==$p and .id=="S4"))[0].by_name | length >= 3' "$WORK/steady.jsonl" >/dev/null ||
		die "$p S4: no per-request-name latencies at the steady step"
done
for p in refop hydra keycloak; do
	for f in coldstart-A.json coldstart-B.json gcjitter.json; do
		jq -e '.status == "complete"' "$run/$p/$f" >/dev/null || die "$p: $f missing or not complete"
	done
	compgen -G "$run/$p/samples*.jsonl" >/dev/null || die "$p: no sampler records"
done
grep -q '^| S1 discovery | hydra |' "$run/COMPARISON.md" || die "COMPARISON.md has no Hydra S1 row"
# Zitadel runs only with ZITADEL_BIN or a Docker engine: without them its rows are N/A saying so.
# Native mode (ZITADEL_BIN) listens on every interface, which Zitadel cannot be told otherwise
# (scripts/products/zitadel): refused, its rows N/A naming the socket. In compose mode its rows are
# asserted like the others'. S2l alone may be N/A, and then only as the adapter's meta declares
# it (scenario_na), with that reason in the row.
if [[ -z "${ZITADEL_BIN:-}" ]] && ! docker info >/dev/null 2>&1; then
	jq -e '.status == "na" and (.na_reason | test("ZITADEL_BIN is not set and no Docker engine"))' \
		"$run/zitadel/meta.json" >/dev/null || die "zitadel: want an N/A meta naming ZITADEL_BIN and Docker"
	grep -q '^| S1 discovery | zitadel | N/A .*ZITADEL_BIN' "$run/COMPARISON.md" ||
		die "COMPARISON.md has no N/A row for Zitadel with the reason"
elif [[ -n "${ZITADEL_BIN:-}" && "${IDPBENCH_MODE:-}" != compose ]]; then
	jq -e '.status == "na" and (.na_reason | test("zitadel listens beyond loopback"))' "$run/zitadel/meta.json" >/dev/null ||
		die "zitadel native: want an N/A meta naming the socket it listens on beyond loopback, got $(jq -c '{status, na_reason}' "$run/zitadel/meta.json")"
	log "ok: zitadel native N/A: $(jq -r .na_reason "$run/zitadel/meta.json")"
else
	jq -e '.status == "ok"' "$run/zitadel/meta.json" >/dev/null ||
		die "zitadel: ZITADEL_BIN is set or a Docker engine answers, but its meta is $(jq -c '{status, na_reason}' "$run/zitadel/meta.json")"
	zitadel_ids=(S1 S2 S2j S3 S4 S5 S6)
	s2l_na="$(jq -r '.scenario_na.client_credentials_login // ""' "$run/zitadel/meta.json")"
	if [[ -z "$s2l_na" ]]; then
		zitadel_ids+=(S2l)
	else
		jq -s -e --arg r "$s2l_na" 'map(select(.product=="zitadel" and .id=="S2l")) | length == 1 and
			(.[0].steady | not) and .[0].reason == $r' "$WORK/steady.jsonl" >/dev/null ||
			die "zitadel S2l: the meta declares it N/A ($s2l_na), want an N/A row with that reason"
		log "ok: zitadel S2l N/A: $s2l_na"
	fi
	expect zitadel "${zitadel_ids[@]}"
	jq -s -e 'map(select(.product=="zitadel" and .id=="S4"))[0].by_name | length >= 3' "$WORK/steady.jsonl" >/dev/null ||
		die "zitadel S4: no per-request-name latencies at the steady step"
	for f in coldstart-A.json coldstart-B.json gcjitter.json; do
		jq -e '.status == "complete"' "$run/zitadel/$f" >/dev/null || die "zitadel: $f missing or not complete"
	done
	compgen -G "$run/zitadel/samples*.jsonl" >/dev/null || die "zitadel: no sampler records"
fi
compgen -G "$run/charts/*.svg" >/dev/null || die "no SVG charts next to COMPARISON.md"

phase "the generic oidc adapter on Hydra, Keycloak and the reference OP"
IDPBENCH_RUNTEST=1 IDPBENCH_NO_BUILD=1 go test -count=1 -timeout 60m -run '^TestCheckOIDC$' ./internal/runtest
phase "all tests passed"
