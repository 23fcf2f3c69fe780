#!/usr/bin/env bash
# adapters.sh: runs the adapters of the tree ROOT (products/{refop,
# hydra,keycloak,zitadel}/adapter) on the fabricated states under testdata/args
# ("PRODUCT state/", "pg shared/") and writes, per product, OUT/PRODUCT.golden:
# each entry point's stdout and exit status (pools; setup; the goldens here
# also hold endpoint, loadargs, ttl and metricsargs for every scenario, which
# the adapters answered until the ladder read them in-process) and what it called, with the
# tools it calls replaced by recorders (mintpool, provision
# pool/hydra/keycloak/zitadel, readback, coldstart, loadstep; every other
# provision subcommand is BIN's, runstate is RUNSTATE); then what three of the adapters' own
# functions printed or called (hydra_config, zitadel_config, keycloak's
# product_start), nothing where a function is gone.
#
# The goldens here were made by the adapters as they were before `provision
# args` took their answers into Go (commit 14c8a5c, with its provision); the
# tests hold products/*' answers to them (TestAnswersMatchTheAdapters: the
# entries' Answer for the four moved verbs) and run this again on today's
# adapters (TestAdaptersPrintTheGoldens: the lifecycle entry points).
#
#   ROOT=/path/to/checkout BIN=/path/to/its/provision RUNSTATE=/path/to/its/runstate [OUT=DIR] \
#     testdata/args/adapters.sh            (from products/; writes into the states)
set -o errexit -o nounset -o pipefail

ROOT="${ROOT:?the checkout whose adapters run}"
BIN="${BIN:?its provision binary}"
RUNSTATE="${RUNSTATE:?its runstate binary (processes and ports; not recorded)}"
OUT="${OUT:-testdata/args}"
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
ln -s "$RUNSTATE" "$fakes/runstate"

# answer PRODUCT ARGS...: one golden section, the entry point's stdout, then
# what the recorders saw.
answer() {
	local p="$1" rc=0 out
	shift
	: >"$REC"
	out="$(IDPBENCH_BIN="$fakes" "$ROOT/products/$p/adapter" "$@" 2>/dev/null)" || rc=$?
	echo "=== ${*:1:1} ${*:3:1} (exit $rc)"
	[[ -z "$out" ]] || printf '%s\n' "$out"
	[[ ! -s "$REC" ]] || { echo "--- recorded"; cat "$REC"; }
}

# inside PRODUCT NAME CODE ARGS...: a golden section of what CODE (calls of
# the adapter's functions, not entry points; ARGS are its $1...) printed and
# the recorders saw.
inside() {
	local p="$1" name="$2" copy="$fakes/root/products/$1/adapter" out
	shift 2
	mkdir -p "$fakes/root/products/$p" "$fakes/root/scripts"
	ln -sfn "$ROOT/scripts/lib" "$fakes/root/scripts/lib"
	sed '$d' "$ROOT/products/$p/adapter" >"$copy" # all but adapter_main "$@", beside ROOT's lib
	: >"$REC"
	# shellcheck disable=SC1090
	out="$(IDPBENCH_BIN="$fakes" bash -c "source \"\$0\" && $1" "$copy" "${@:2}" 2>/dev/null)" || true
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
		for s in introspect refresh userinfo jwt_bearer; do answer "$p" pools "$st" "$s" 7 "$st/pools/$s.pool"; done
		if [[ "$p" != refop ]]; then
			[[ "$p" != zitadel ]] || cp "$st/zitadel-setup.json" "$fakes/summary"
			answer "$p" setup "$st"
			[[ "$p" != zitadel ]] || mv "$fakes/summary" "$st/zitadel-setup.json"
			rm -f "$st/$p-setup.json.tmp" "$st/facts.json" "$st/settle.json"
			[[ "$p" == zitadel ]] || rm -f "$st/$p-setup.json"
		fi
		# shellcheck disable=SC2016 # the code is bash -c's, its $1 the state
		case "$p" in
		hydra) inside hydra config 'hydra_config 44444 44445' ;;
		keycloak) inside keycloak start 'product_start "$1" A' "$st" ;;
		zitadel) inside zitadel config 'adapter_pg_use "$1" && zitadel_config "$1"' "$st" ;;
		esac
	} >"$OUT/$p.golden"
	rm -f "$st/coldstart-A.json" "$st/pgids"
	rm -rf "$st/logs"
done
