# shellcheck shell=bash
# adapter.sh: the shared plumbing of products/<name>/adapter. An adapter sources
# it, sets PRODUCT and PRODUCT_VERSION, defines product_install, product_up,
# product_start and product_stop (and any default product_* hook it replaces),
# and ends with `adapter_main "$@"`, which answers the lifecycle:
#
#   install | version
#   up | restart | setup | health | down   STATE_DIR
#   fresh   STATE_DIR SCENARIO
#   pools STATE_DIR SCENARIO N OUT
#
# What a scenario measures (endpoint, loadstep and metrics arguments, the
# pool's lifetime), the sampler's arguments and the meta's inputs are not
# asked here: the Go tools read them in-process from the product's registry
# entry (product.Product.Answer, SampleArgs, MetaArgs).
# Exit codes: 0 ok, 1 failure, 2 usage, 3 scenario N/A (pools).
# The entry points, the hooks, the state directory and the modes:
# docs/design.md#the-adapter-interface.

# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source=SCRIPTDIR/postgres.sh
source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh"
# shellcheck source=SCRIPTDIR/compose.sh
source "$(dirname "${BASH_SOURCE[0]}")/compose.sh"

# Scenarios an adapter is asked about, in report order.
ADAPTER_SCENARIOS=("${IDPBENCH_SCENARIO_NAMES[@]}")

# --- state -------------------------------------------------------------------

state_init() {
	local state="$1"
	mkdir -p "$state/pids" "$state/logs" "$state/pools"
	(umask 077 && mkdir -p "$state/secrets")
	touch "$state/state.env"
}

# state_set STATE KEY VALUE records a value (later values win).
state_set() {
	printf '%s=%q\n' "$2" "$3" >>"$1/state.env"
}

# state_get STATE KEY prints a recorded value; dies when it is missing.
state_get() {
	local v
	v="$(state_get_opt "$1" "$2")"
	[[ -n "$v" ]] || die "$PRODUCT: $2 is not recorded in $1/state.env (run up/setup first)"
	printf '%s\n' "$v"
}

# state_get_opt STATE KEY prints a recorded value or nothing.
state_get_opt() {
	[[ -s "$1/state.env" ]] || return 0
	(
		# shellcheck disable=SC1091
		source "$1/state.env"
		printf '%s\n' "${!2:-}"
	)
}

state_pidfile() { printf '%s/pids/%s.pid\n' "$1" "$2"; }
state_logfile() { printf '%s/logs/%s.log\n' "$1" "$2"; }
state_secret() { printf '%s/secrets/%s\n' "$1" "$2"; }

# state_add_dir STATE DIR records a directory that down must see removed.
state_add_dir() {
	printf '%s\n' "$2" >>"$1/dirs"
}

# state_add_db STATE NAME records a database that down must see dropped.
state_add_db() {
	printf '%s\n' "$2" >>"$1/dbs"
}

# record_pool STATE SCENARIO KIND MODE SIZE FLOW appends to the pool record
# (STATE/pools.jsonl, through provision pool).
record_pool() {
	"$(tool provision)" pool --state "$1" --scenario "$2" --kind "$3" --mode "$4" --size "$5" --flow "$6"
}

# --- starting through coldstart ---------------------------------------------

# adapter_coldstart STATE MODE READY_URL TIMEOUT_S CMD...: starts CMD under
# coldstart into STATE/coldstart-MODE.json and leaves it running; fails when it
# exits or is not ready in time. The record keeps CMD: secrets go as VAR=value
# adapter_coldstart ... (docs/design-reference.md#the-hooks).
# COLDSTART_CONTAINERS=NAMES in its environment (compose_start): the peak is
# those containers' memory, not the process tree's (coldstart --containers).
adapter_coldstart() {
	local state="$1" mode="$2" ready="$3" timeout="$4" coldstart pidfile rc=0 pin=() what modeargs=()
	shift 4
	coldstart="$(tool coldstart)" || return 1 # errexit is off under `adapter_coldstart ... || die`
	pidfile="$(state_pidfile "$state" "$PRODUCT")"
	! runstate alive "$pidfile" || die "$PRODUCT is already running ($pidfile)"
	# MODE fresh: a start before a load step (the fresh entry point), not a
	# cold-start measurement: no --mode in the record, which the report skips.
	what="cold start $mode" && modeargs=(--mode "$mode")
	[[ "$mode" == fresh ]] && what="fresh start" && modeargs=()
	# compose mode: the peak is the product's containers' (compose_start sets it)
	[[ -z "${COLDSTART_CONTAINERS:-}" ]] || modeargs+=(--containers "$COLDSTART_CONTAINERS")
	log "$what: $(basename "$1") ..., ready when $ready answers 200 (at most ${timeout}s)"
	mapfile -t pin < <(pin_prefix server)
	pinned driver "$coldstart" --ready "$ready" --timeout "${timeout}s" "${modeargs[@]}" \
		--product "$PRODUCT" --product-version "$PRODUCT_VERSION" --pidfile "$pidfile" \
		--log "$(state_logfile "$state" "$PRODUCT-$mode")" -o "$state/coldstart-$mode.json" \
		-- "${pin[@]}" "$@" || rc=$?
	[[ -s "$pidfile" ]] && head -n1 "$pidfile" >>"$state/pgids"
	((rc == 0)) || { log "$what failed (exit $rc; its record: $state/coldstart-$mode.json)"; return 1; }
}

# --- shared database ---------------------------------------------------------

# adapter_pg_up STATE: use the shared cluster ($IDPBENCH_PG_DIR) when there is
# one, else start a private one that down stops again.
adapter_pg_up() {
	local state="$1" dir
	if [[ -n "${IDPBENCH_PG_DIR:-}" && -s "$IDPBENCH_PG_DIR/pg.env" ]]; then
		state_set "$state" PG_SHARED_DIR "$IDPBENCH_PG_DIR"
		return 0
	fi
	dir="$(pg_make_dir)"
	state_set "$state" PG_PRIVATE_DIR "$dir"
	state_add_dir "$state" "$dir"
	pg_up "$dir"
}

# adapter_pg_use STATE points IDPBENCH_PG_DIR at the cluster of this product.
adapter_pg_use() {
	local dir
	dir="$(state_get_opt "$1" PG_PRIVATE_DIR)"
	[[ -n "$dir" ]] || dir="$(state_get_opt "$1" PG_SHARED_DIR)"
	[[ -n "$dir" ]] || return 1
	IDPBENCH_PG_DIR="$dir"
	export IDPBENCH_PG_DIR
}

# adapter_pg_down STATE stops a private cluster (the shared one stays up).
adapter_pg_down() {
	local dir
	dir="$(state_get_opt "$1" PG_PRIVATE_DIR)"
	[[ -n "$dir" && -d "$dir" ]] || return 0
	IDPBENCH_PG_DIR="$dir" pg_down
}

# --- entry points ------------------------------------------------------------

adapter_usage() {
	cat >&2 <<-EOF
		usage: $(basename "$0") install | version
		       $(basename "$0") up|restart|setup|health|down STATE_DIR
		       $(basename "$0") fresh STATE_DIR SCENARIO
		       $(basename "$0") pools STATE_DIR SCENARIO N OUT
		Exit codes: 0 ok, 1 failure, 2 usage, 3 scenario N/A (pools).
	EOF
	exit 2
}

# adapter_na SCENARIO exits 3 with the reason when SCENARIO is N/A.
adapter_na() {
	local reason
	reason="$(product_na_reason "$1")"
	[[ -z "$reason" ]] && return 0
	log "$1: N/A: $reason"
	exit 3
}

# adapter_main CMD ARGS...: checks the count of ARGS and the scenario, then
# runs the entry point (no `a && b` here: errexit does not reach into b).
adapter_main() {
	# An adapter that builds on this one (ADAPTER_EXTENDING set while it
	# sources it: products/example/adapter) takes its functions, runs nothing.
	[[ -z "${ADAPTER_EXTENDING:-}" ]] || return 0
	export IDPBENCH_LOG_TAG="$PRODUCT"
	local cmd="${1:-}" want before
	case "$cmd" in
	install | version) want=0 ;;
	up | restart | setup | health | down) want=1 ;;
	fresh) want=2 ;;
	pools) want=4 ;;
	-h | --help | help | "") adapter_usage ;;
	*)
		log "unknown subcommand: $cmd"
		adapter_usage
		;;
	esac
	shift
	(($# == want)) || adapter_usage
	# No `printf | grep -q` here: grep's early exit can kill printf with
	# SIGPIPE, which pipefail turned into "unknown scenario" (seen in CI).
	if ((want >= 2)) && [[ " ${ADAPTER_SCENARIOS[*]} " != *" $2 "* ]]; then
		log "$PRODUCT: unknown scenario: $2"
		exit 2
	fi
	case "$cmd" in
	install) product_install ;;
	version) printf '%s\n' "$PRODUCT_VERSION" ;;
	up)
		state_init "$1"
		product_up "$1"
		adapter_listeners "$1"
		;;
	restart)
		[[ -s "$1/state.env" ]] || die "no state in $1 (run up first)"
		product_stop "$1"
		product_start "$1" B
		adapter_listeners "$1"
		;;
	fresh) # a no-op unless the adapter defines product_fresh, so ladders call it for all
		declare -F product_fresh >/dev/null || exit 0
		[[ -s "$1/state.env" ]] || die "no state in $1 (run up first)"
		before="$(head -n1 "$(state_pidfile "$1" "$PRODUCT")" 2>/dev/null || true)"
		product_fresh "$1" "$2"
		# Only a new process has new sockets to check.
		[[ "$(head -n1 "$(state_pidfile "$1" "$PRODUCT")" 2>/dev/null || true)" == "$before" ]] || adapter_listeners "$1"
		;;
	setup)
		product_setup "$1"
		adapter_readback "$1"
		;;
	pools)
		adapter_na "$2"
		[[ "$3" =~ ^[1-9][0-9]*$ ]] || adapter_usage
		product_pools "$1" "$2" "$3" "$4"
		;;
	health) adapter_health "$1" ;;
	down) adapter_down "$1" ;;
	esac
}

# adapter_listeners STATE: the product group's listening TCP sockets into
# STATE/listeners.json; one beyond loopback fails the start, naming it.
adapter_listeners() {
	local state="$1" pidfile
	pidfile="$(state_pidfile "$state" "$PRODUCT")"
	rm -f "$state/listeners.json"
	if compose_mode "$state" || [[ ! -s "$pidfile" ]]; then return 0; fi
	"$(tool readback)" --product "$PRODUCT" --listeners "$pidfile" -o "$state/listeners.json" ||
		die "$PRODUCT must listen on loopback only; it is still running (down stops it)"
}

# adapter_readback STATE reads the configuration in force into STATE/facts.json
# (readback with product_readback's arguments); a failed read fails the setup.
adapter_readback() {
	local state="$1" args=()
	rm -f "$state/facts.json"
	declare -F product_readback >/dev/null || return 0
	mapfile -t args < <(product_readback "$state")
	((${#args[@]} > 0)) || return 0
	# Compose mode's database wants its password: the run's pgpass.
	! compose_mode "$state" || export PGPASSFILE="$state/secrets/pgpass"
	"$(tool readback)" --product "$PRODUCT" --want-version "$PRODUCT_VERSION" "${args[@]}" -o "$state/facts.json" ||
		die "reading back the configuration in force failed (see above)"
}

# --- answers from products -------------------------------------------

# adapter_args STATE VERB [NAME] prints the product's answer from its entry in
# products and STATE (provision args), one value a line.
adapter_args() {
	"$(tool provision)" args --product "$PRODUCT" --state "$@"
}

# adapter_argv ARRAY STATE VERB [NAME] reads that answer into ARRAY; fails
# when provision args does.
adapter_argv() {
	local -n _argv="$1"
	local txt
	txt="$(adapter_args "${@:2}")" || return 1
	_argv=()
	[[ -z "$txt" ]] || mapfile -t _argv <<<"$txt"
}

product_na_reason() { "$(tool provision)" na "$PRODUCT" "$1"; }
# product_endpoint STATE SCENARIO: the URL, for health and the adapters' own
# checks (the ladder reads it in-process).
product_endpoint() { adapter_args "$1" endpoint "$2"; }
product_setup() { adapter_setup "$1"; }

# product_down STATE: compose_down, or product_stop and drop what up created.
product_down() {
	local d
	if compose_mode "$1"; then
		compose_down "$1"
		return 0
	fi
	product_stop "$1"
	if [[ -s "$1/dbs" ]] && adapter_pg_use "$1" 2>/dev/null && [[ -s "$IDPBENCH_PG_DIR/pg.env" ]]; then
		while IFS= read -r d; do pg_dropdb "$d"; done <"$1/dbs"
	fi
	adapter_pg_down "$1"
}

# product_pools STATE SCENARIO N OUT mints N credentials by the pool's plan
# (kind, mode, flow, then mintpool's arguments) into OUT and records it.
product_pools() {
	local plan=()
	adapter_argv plan "$1" pool "$2" || return 1
	"$(tool mintpool)" "${plan[@]:3}" -n "$3" -o "$4"
	record_pool "$1" "$2" "${plan[0]}" "${plan[1]}" "$3" "${plan[2]}"
}

# adapter_setup STATE provisions the product through its API (provision
# PRODUCT); its summary, no secret, -> STATE/PRODUCT-setup.json.
adapter_setup() {
	local out="$1/$PRODUCT-setup.json" args=()
	adapter_argv args "$1" setup || return 1
	log "provisioning through $PRODUCT's API (provision $PRODUCT)"
	"$(tool provision)" "$PRODUCT" "${args[@]}" >"$out.tmp" ||
		{ rm -f "$out.tmp"; die "provisioning $PRODUCT failed (see the provision $PRODUCT error above)"; }
	mv "$out.tmp" "$out"
}

# adapter_health STATE succeeds when the product's process group (if it started
# one) has a live member and its discovery answers 200 within 10 s; else prints why.
adapter_health() {
	local url
	url="$(product_endpoint "$1" discovery)"
	runstate health --product "$PRODUCT" --url "$url" "$1"
}

# adapter_down STATE stops the product, then fails naming anything recorded
# that is left (runstate left: process, group member, port, database, directory).
adapter_down() {
	local state="$1"
	[[ -d "$state" ]] || die "no state directory $state"
	product_down "$state"
	# runstate left names what is left on stderr ("left after down: ...").
	runstate left --product "$PRODUCT" "$state" >/dev/null || exit 1
	log "down; no process, port or data directory left"
}
