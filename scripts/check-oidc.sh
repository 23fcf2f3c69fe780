#!/usr/bin/env bash
# check-oidc.sh: proves the generic adapter (scripts/products/oidc) is
# generic: it measures Hydra, Keycloak and the reference OP, each started by
# its own adapter, knowing only what a configuration file tells it.
#
#   scripts/check-oidc.sh [--keep] [--only P[,P]]
#
#   --keep       keep the scratch directory (results, configurations; printed at the end)
#   --only P,..  cases to run (default: hydra keycloak refop refop-start)
#
# For each case, in series:
#   1. the product's own adapter: install (cached), up and setup into a
#      scratch state directory (skipped for refop-start)
#   2. a configuration for the oidc adapter: the shipped example
#      (examples/oidc/<product>.env) plus overrides taken from that state --
#      issuer, ports, secret and password files, the sampler's process and
#      database. refop-start uses examples/oidc/refop.env on a free port: the
#      oidc adapter starts the reference OP itself (START_COMMAND, cold start)
#   3. scripts/run-comparison.sh --quick --fresh --only oidc with
#      IDPBENCH_OIDC_CONFIG pointing at it (its own run id oidc-<case>)
#   4. the product's own adapter: down, which fails naming anything left
#   5. assertions: `aggregate steady` has S1 S2 S3 S5 S6 for the configured
#      product name with numbers and zero failed requests at the steady step;
#      meta.json names that product; the sampler recorded its process tree;
#      refop-start has complete cold starts A and B and its port is free again
# Then one aggregate report over all cases (COMPARISON.md in the scratch
# directory) must hold a row per case.
#
# Environment: IDPBENCH_GCJITTER_S (default here 15 s), IDPBENCH_NO_BUILD=1
# (use the tools already in IDPBENCH_BIN). Exit 0 only when every case passes.
set -o errexit -o nounset -o pipefail

# shellcheck source=SCRIPTDIR/lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
# shellcheck source=SCRIPTDIR/lib/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/postgres.sh"
export IDPBENCH_LOG_TAG=check-oidc

CASES=(hydra keycloak refop refop-start)
EXAMPLES="$IDPBENCH_ROOT/examples/oidc"
KEEP=0
WORK=""
UP_PRODUCT="" # the product whose own adapter has it up, and its state
UP_STATE=""

usage() {
	script_help
	exit 2
}

cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -n "$UP_PRODUCT" ]]; then
		log "cleanup: stopping $UP_PRODUCT"
		"$IDPBENCH_ROOT/scripts/products/$UP_PRODUCT" down "$UP_STATE" || rc=1
	fi
	if [[ -n "$WORK" ]]; then
		if ((KEEP)); then log "kept $WORK"; else rm -rf "$WORK"; fi
	fi
	exit "$rc"
}

# state_value STATE KEY prints a value an adapter recorded.
state_value() {
	(
		# shellcheck disable=SC1091
		source "$1/state.env"
		printf '%s\n' "${!2:-}"
	)
}

# state_dsn STATE DB prints the DSN of DB on the cluster the adapter used.
state_dsn() {
	local dir
	dir="$(state_value "$1" PG_PRIVATE_DIR)"
	[[ -n "$dir" ]] || dir="$(state_value "$1" PG_SHARED_DIR)"
	IDPBENCH_PG_DIR="$dir" pg_dsn "$2"
}

# regex_quote S prints S with the regex metacharacters of a path escaped.
regex_quote() {
	# shellcheck disable=SC2001 # one character class, clearer in sed
	sed 's/[.[\*^$+?(){}|]/\\&/g' <<<"$1"
}

# config_hydra STATE: examples/oidc/hydra.env with this Hydra's ports and files.
config_hydra() {
	local state="$1" issuer admin secret
	issuer="$(state_value "$state" ISSUER)"
	admin="$(state_value "$state" ADMIN_URL)"
	secret="$state/secrets/bench-svc"
	cat "$EXAMPLES/hydra.env"
	cat <<-EOF
		# --- check-oidc.sh: this Hydra (scripts/products/hydra, state $state)
		ISSUER=$issuer
		READY_URL=${issuer}health/ready
		CLIENT_SECRET_FILE=$secret
		INTROSPECTION_ENDPOINT=$admin/admin/oauth2/introspect
		TOKEN_COMMAND=mintpool --flow hydra-login --issuer $issuer --admin-url $admin --redirect-uri http://127.0.0.1/cb --client-id bench-svc --client-secret-file $secret --client-auth basic --scope "openid offline_access" --subject 'user%d' --users 100 -n "\$IDPBENCH_POOL_COUNT" -P 8 --emit "\$IDPBENCH_POOL_EMIT" --product oidc:hydra -o -
		MATCH=hydra[^ ]* serve all .*-c $(regex_quote "$state/hydra.yml")
		PG_DSN=$(state_dsn "$state" hydra)
	EOF
}

# config_keycloak STATE: examples/oidc/keycloak.env with this Keycloak's.
config_keycloak() {
	local state="$1"
	cat "$EXAMPLES/keycloak.env"
	cat <<-EOF
		# --- check-oidc.sh: this Keycloak (scripts/products/keycloak, state $state)
		ISSUER=$(state_value "$state" ISSUER)
		READY_URL=http://127.0.0.1:$(state_value "$state" MGMT_PORT)/health/ready
		CLIENT_SECRET_FILE=$state/secrets/bench-svc
		PASSWORD_FILE=$state/secrets/users-password
		USERS=${IDPBENCH_KEYCLOAK_USERS:-20}
		ACCESS_TOKEN_TTL_S=3600
		MATCH=kc\\.sh start .*--http-port=$(state_value "$state" HTTP_PORT)( |\$)
		PG_DSN=$(state_dsn "$state" keycloak)
	EOF
}

# config_refop STATE: examples/oidc/refop.env pointed at a reference OP that
# its own adapter started (so no START_COMMAND).
config_refop() {
	local state="$1" issuer
	issuer="$(state_value "$state" ISSUER)"
	cat "$EXAMPLES/refop.env"
	cat <<-EOF
		# --- check-oidc.sh: this reference OP (scripts/products/refop, state $state)
		ISSUER=$issuer
		READY_URL=${issuer}.well-known/openid-configuration
		START_COMMAND=
		CLIENT_SECRET_FILE=$state/secrets/sid1
		USER_CLIENT_SECRET_FILE=$state/secrets/web
		TOKEN_COMMAND=$EXAMPLES/refop-tokens.sh $issuer $state/secrets/web
		PIDFILE=$state/pids/refop.pid
	EOF
}

# config_refop_start PORT: examples/oidc/refop.env as shipped, on PORT, with
# its relative paths made absolute (the copy lives in the scratch directory).
config_refop_start() {
	sed "s/19998/$1/g" "$EXAMPLES/refop.env"
	cat <<-EOF
		# --- check-oidc.sh: the example as shipped, on a free port
		NAME=oidc:refop-start
		CLIENT_SECRET_FILE=$EXAMPLES/refop/sid1.secret
		USER_CLIENT_SECRET_FILE=$EXAMPLES/refop/web.secret
		TOKEN_COMMAND=$EXAMPLES/refop-tokens.sh http://localhost:$1/ $EXAMPLES/refop/web.secret
	EOF
}

# config_name FILE prints the NAME a configuration gives the product.
config_name() {
	"$(tool provision)" oidc env --config "$1" | sed -n 's/^NAME=//p'
}

# own_up PRODUCT STATE: install, up and setup through the product's adapter.
own_up() {
	local a="$IDPBENCH_ROOT/scripts/products/$1"
	"$a" install
	UP_PRODUCT="$1" UP_STATE="$2"
	"$a" up "$2"
	"$a" setup "$2"
}

# own_down: down through the product's adapter (it fails naming what is left).
own_down() {
	local p="$UP_PRODUCT"
	[[ -n "$p" ]] || return 0
	"$IDPBENCH_ROOT/scripts/products/$p" down "$UP_STATE" || die "$p: its own adapter's down left something behind"
	UP_PRODUCT=""
}

# expect RUN NAME ID...: each scenario has a steady step with zero failures.
expect() {
	local run="$1" name="$2" id row steady="$WORK/steady-${1##*/}.jsonl"
	shift 2
	"$(tool aggregate)" steady "$run" >"$steady"
	for id in "$@"; do
		row="$(jq -c --arg p "$name" --arg id "$id" 'select(.product == $p and .id == $id)' "$steady")"
		[[ -n "$row" ]] || die "$name $id: no row in the comparison"
		jq -e '.steady and .qps > 0 and .failed == 0' >/dev/null <<<"$row" ||
			die "$name $id: want numbers with zero errors at the steady step, got $row"
		log "ok: $name $id $(jq -r '"c=\(.c) qps=\(.qps | floor) p50=\(.p50_ms)ms p99=\(.p99_ms)ms failed=\(.failed)"' <<<"$row")"
	done
}

# check_records RUN NAME: the meta names the product; the sampler recorded
# its process tree under that name.
check_records() {
	local run="$1" name="$2"
	jq -e --arg p "$name" '.product == $p and .status == "ok"' "$run/oidc/meta.json" >/dev/null ||
		die "$name: meta.json does not name $name with status ok: $(jq -c '{product, status, na_reason}' "$run/oidc/meta.json")"
	compgen -G "$run/oidc/samples*.jsonl" >/dev/null || die "$name: no sampler records"
	jq -se --arg s "process:$name" 'map(select(.source == $s and .rss_bytes > 0)) | length > 0' \
		"$run"/oidc/samples*.jsonl >/dev/null || die "$name: the sampler recorded no process:$name"
	jq -e '.status == "complete"' "$run/oidc/gcjitter.json" >/dev/null || die "$name: gcjitter.json missing or not complete"
}

# check_case CASE runs one case (see the header).
check_case() {
	local c="$1" state="$WORK/state/$1" cfg="$WORK/$1.env" run="$WORK/results/oidc-$1" name port m t0=$SECONDS
	case "$c" in
	hydra | keycloak | refop)
		log "== $c: its own adapter: install, up, setup"
		own_up "$c" "$state"
		"config_$c" "$state" >"$cfg"
		;;
	refop-start)
		"$IDPBENCH_ROOT/scripts/products/refop" install
		port="$(free_port)"
		config_refop_start "$port" >"$cfg"
		;;
	*) die "unknown case $c (want one of ${CASES[*]})" ;;
	esac
	name="$(config_name "$cfg")"
	log "== $c: run-comparison.sh --quick --only oidc as $name (IDPBENCH_OIDC_CONFIG=$cfg)"
	IDPBENCH_OIDC_CONFIG="$cfg" IDPBENCH_NO_BUILD=1 IDPBENCH_RESULTS="$WORK/results" \
		IDPBENCH_GCJITTER_S="${IDPBENCH_GCJITTER_S:-15}" \
		"$IDPBENCH_ROOT/scripts/run-comparison.sh" --quick --fresh --only oidc --run-id "oidc-$c" ||
		die "$c: run-comparison.sh --only oidc failed"
	log "== $c: down"
	own_down
	if [[ "$c" == refop-start ]]; then
		port_free "$port" || die "$c: port $port is still in use after down"
		for m in A B; do
			jq -e --arg p "$name" '.status == "complete" and .product == $p' "$run/oidc/coldstart-$m.json" >/dev/null ||
				die "$c: coldstart-$m.json missing, not complete or not $name"
		done
	fi
	log "== $c: assertions"
	expect "$run" "$name" S1 S2 S3 S5 S6
	check_records "$run" "$name"
	log "== $c: passed in $((SECONDS - t0)) s"
}

main() {
	local only="" c name
	while (($# > 0)); do
		case "$1" in
		--keep) KEEP=1 ;;
		--only) only="$2" && shift ;;
		-h | --help) usage ;;
		*) log "unknown argument $1" && usage ;;
		esac
		shift
	done
	[[ -z "$only" ]] || IFS=, read -r -a CASES <<<"$only"
	require_cmd jq curl python3 go
	trap cleanup EXIT
	trap 'exit 130' INT TERM
	WORK="$(make_tmpdir idpbench-check-oidc)"
	mkdir -p "$WORK/state" "$WORK/results"
	# Products start their own PostgreSQL (the caller's shared one is not ours to use).
	unset IDPBENCH_PG_DIR
	if [[ -z "${IDPBENCH_NO_BUILD:-}" ]]; then build_tools; fi
	for c in "${CASES[@]}"; do check_case "$c"; done

	log "== one report over every case"
	"$(tool aggregate)" report "$WORK"/results/oidc-* -o "$WORK/results/COMPARISON.md"
	for c in "${CASES[@]}"; do
		name="$(config_name "$WORK/$c.env")"
		grep -qF "| S1 discovery | $name |" "$WORK/results/COMPARISON.md" ||
			die "COMPARISON.md has no S1 row for $name"
	done
	log "all oidc checks passed (${CASES[*]}) in $SECONDS s; report: $WORK/results/COMPARISON.md"
}

main "$@"
