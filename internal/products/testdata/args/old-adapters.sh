#!/usr/bin/env bash
# old-adapters.sh: how the golden answers in this directory were made, by
# running the adapters as they were before `provision args` took their
# scenario answers into Go (scripts/products/{refop,hydra,keycloak,zitadel}
# at commit 14c8a5c). It needs those adapters (git show 14c8a5c:PATH), so it
# does not run against today's tree; it is kept to say what the goldens are:
# each entry point's stdout and exit status on the fabricated state under
# testdata/args/PRODUCT state/, with the tools the adapters call replaced by
# recorders (mintpool, provision pool/hydra/keycloak/zitadel, readback,
# coldstart, loadstep) and every other provision subcommand real.
#
#   OLD=/path/to/checkout-of-14c8a5c BIN=/path/to/its/provision \
#     internal/products/testdata/args/old-adapters.sh   (from internal/products)
set -o errexit -o nounset -o pipefail

OLD="${OLD:?the old checkout}"
BIN="${BIN:?its provision binary}"
here=testdata/args
fakes="$(mktemp -d)"
trap 'rm -rf "$fakes"' EXIT

# Recorders: each appends "TOOL ARG..." (one word a line, then a blank line) to $REC.
for t in mintpool readback coldstart loadstep; do
	cat >"$fakes/$t" <<-'EOS'
		#!/usr/bin/env bash
		{ echo "$(basename "$0")"; printf '%s\n' "$@"; echo; } >>"$REC"
		out=""; prev=""
		for a in "$@"; do [[ "$prev" == -o ]] && out="$a"; prev="$a"; done
		case "$(basename "$0")" in
		readback) echo '{"facts":[]}' >"$out" ;;
		coldstart) echo '{"status":"complete","seconds_to_ready":1}' >"$out" ;;
		loadstep) echo '{"requests":1,"error_rate":0}' >"$out" ;;
		esac
	EOS
	chmod +x "$fakes/$t"
done
cat >"$fakes/provision" <<EOS
#!/usr/bin/env bash
case "\$1" in
pool | hydra | keycloak | zitadel) { echo "provision"; printf '%s\n' "\$@"; echo; } >>"\$REC"; [[ "\$1" == pool ]] || echo '{}' ;;
*) exec "$BIN" "\$@" ;;
esac
EOS
chmod +x "$fakes/provision"

scenarios=(discovery client_credentials client_credentials_login jwt_bearer introspect auth_code refresh userinfo)

# answer PRODUCT ARGS...: one golden section, the entry point's stdout, then
# what the recorders saw.
answer() {
	local p="$1" rc=0 out
	shift
	: >"$REC"
	out="$(IDPBENCH_BIN="$fakes" "$OLD/scripts/products/$p" "$@" 2>/dev/null)" || rc=$?
	echo "=== ${*:1:1} ${*:3:1} (exit $rc)"
	[[ -z "$out" ]] || printf '%s\n' "$out"
	[[ ! -s "$REC" ]] || { echo "--- recorded"; cat "$REC"; }
}

# inside PRODUCT NAME CODE ARGS...: a golden section of what CODE (calls of
# the adapter's functions, not entry points; ARGS are its $1...) printed and
# the recorders saw.
inside() {
	local p="$1" name="$2" copy="$OLD/scripts/products/.old-$1" out
	shift 2
	sed '$d' "$OLD/scripts/products/$p" >"$copy" # all but adapter_main "$@"
	: >"$REC"
	# shellcheck disable=SC1090
	out="$(IDPBENCH_BIN="$fakes" bash -c "source \"\$0\" && $1" "$copy" "${@:2}" 2>/dev/null)"
	rm -f "$copy"
	echo "=== $name"
	[[ -z "$out" ]] || printf '%s\n' "$out"
	[[ ! -s "$REC" ]] || { echo "--- recorded"; cat "$REC"; }
}

export REC="$fakes/rec" IDPBENCH_MODE=native
export IDPBENCH_CACHE=/cache GOMODCACHE=/gomodcache
unset IDPBENCH_KEYCLOAK_USERS REFOP_LOGIN_PARALLEL JAVA_HOME IDPBENCH_PG_DIR IDPBENCH_DRIVER_CPUS IDPBENCH_SERVER_CPUS
for p in refop hydra keycloak zitadel; do
	st="$here/$p state"
	{
		for verb in endpoint loadargs ttl metricsargs; do
			for s in "${scenarios[@]}"; do answer "$p" "$verb" "$st" "$s"; done
		done
		for s in introspect refresh userinfo jwt_bearer; do answer "$p" pools "$st" "$s" 7 "$st/pools/$s.pool"; done
		if [[ "$p" != refop ]]; then
			[[ "$p" != zitadel ]] || cp "$st/zitadel-setup.json" "$fakes/summary"
			answer "$p" setup "$st"
			[[ "$p" != zitadel ]] || mv "$fakes/summary" "$st/zitadel-setup.json"
			rm -f "$st/$p-setup.json.tmp" "$st/facts.json" "$st/settle.json"
			[[ "$p" == zitadel ]] || rm -f "$st/$p-setup.json"
		fi
		case "$p" in
		hydra) inside hydra config 'hydra_config 44444 44445' ;;
		keycloak) inside keycloak start 'product_start "$1" A' "$st" ;;
		zitadel) inside zitadel config 'adapter_pg_use "$1" && zitadel_config "$1"' "$st" ;;
		esac
	} >"$here/$p.golden"
	rm -f "$st/coldstart-A.json" "$st/pgids"
	rm -rf "$st/logs"
done
