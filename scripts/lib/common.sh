# shellcheck shell=bash
# common.sh: paths, logging, processes, ports and secrets for every idpbench script.
# Source it; it defines functions and variables only and runs nothing.
#
# IDPBENCH_ROOT is the repository (from this file's location); IDPBENCH_CACHE,
# IDPBENCH_BIN and IDPBENCH_TMP come from the environment or their defaults
# (docs/design-reference.md#environment).

IDPBENCH_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
IDPBENCH_CACHE="${IDPBENCH_CACHE:-$HOME/.cache/idpbench}"
IDPBENCH_TMP="${IDPBENCH_TMP:-${TMPDIR:-/tmp}}"
export IDPBENCH_ROOT IDPBENCH_CACHE IDPBENCH_TMP

# Every scenario name an adapter answers for (loadstep --scenario; report order).
# shellcheck disable=SC2034 # used by the scripts that source this file
IDPBENCH_SCENARIO_NAMES=(discovery client_credentials client_credentials_login jwt_bearer introspect auth_code refresh userinfo)

# --- logging (stderr only; stdout is for data) -------------------------------

log() { printf '%s %s: %s\n' "$(date +%H:%M:%S)" "${IDPBENCH_LOG_TAG:-idpbench}" "$*" >&2; }
warn() { log "warning: $*"; }
die() { log "error: $*"; note_reason "$*"; exit 1; }
# usage_error MSG: a bad command line, then the hint every tool and script
# prints after one (Go's cli.Hint), exit 2.
usage_error() {
	log "error: $*"
	printf "Try '%s --help'.\n" "$0" >&2
	exit 2
}

# note_reason WHY: the first failure's reason into IDPBENCH_REASON_FILE when
# it is set, as the Go tools' cli.NoteReason does (docs/design-reference.md#environment).
note_reason() {
	[[ -n "${IDPBENCH_REASON_FILE:-}" ]] || return 0
	(set -o noclobber && umask 077 && printf '%s\n' "$1" >"$IDPBENCH_REASON_FILE") 2>/dev/null || true
}

# step N TOTAL MESSAGE... prints "[step N/TOTAL] MESSAGE".
step() {
	local n="$1" total="$2"
	shift 2
	log "[step $n/$total] $*"
}

# require_cmd CMD... dies naming the first missing command.
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || die "required command not found: $c"
	done
}

# --- the Go tools ------------------------------------------------------------

# tools_version prints the tree's short revision ("devel" outside git), with
# -dirty when it has changes outside results/ (a run writing or deleting its
# own results does not change the tools it runs): stamped into the tools.
tools_version() {
	local v
	v="$(git -C "$IDPBENCH_ROOT" describe --always 2>/dev/null)" || { echo devel; return 0; }
	[[ -z "$(git -C "$IDPBENCH_ROOT" status --porcelain -- . ':(exclude)results' 2>/dev/null)" ]] || v+="-dirty"
	printf '%s\n' "$v"
}

# The built tools; a dirty tree's carry the cksum of the checkout's path, so
# two checkouts of one commit never share them.
TOOLS_VERSION="$(tools_version)"
if [[ -z "${IDPBENCH_BIN:-}" ]]; then
	IDPBENCH_BIN="$IDPBENCH_CACHE/tools-$TOOLS_VERSION"
	[[ "$TOOLS_VERSION" != *-dirty ]] || IDPBENCH_BIN+="-$(printf '%s' "$IDPBENCH_ROOT" | cksum | cut -d' ' -f1)"
fi
export IDPBENCH_BIN

# build_tools builds every cmd/* of the tree into $IDPBENCH_BIN, always (the
# build cache makes it cheap), unless IDPBENCH_NO_BUILD is set (the caller
# built them); dies when one fails (go build names it).
build_tools() {
	if [[ -n "${IDPBENCH_NO_BUILD:-}" ]]; then
		log "IDPBENCH_NO_BUILD set: using the tools already in $IDPBENCH_BIN"
		return 0
	fi
	require_cmd go
	mkdir -p "$IDPBENCH_BIN"
	log "building the tools ($TOOLS_VERSION) into $IDPBENCH_BIN"
	(cd "$IDPBENCH_ROOT" && go build -buildvcs=false -o "$IDPBENCH_BIN/" \
		-ldflags "-X github.com/idpbench/idpbench/internal/cli.buildVersion=$TOOLS_VERSION" ./cmd/...) ||
		die "building the tools failed (go build's errors above)"
}

# ensure_pkg COMMAND PACKAGE [APT_OPTION...] installs the OS package PACKAGE
# when COMMAND is missing (as root, passing apt-get install the options, e.g.
# --no-install-recommends; otherwise dies naming the package).
ensure_pkg() {
	command -v "$1" >/dev/null 2>&1 && return 0
	[[ $(id -u) -eq 0 ]] || die "$1 is missing: install the OS package $2"
	log "installing $2 from the OS packages"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${@:3}" "$2" >&2
}

# tool NAME prints the path of a built tool, dying when it is missing.
tool() {
	local p="$IDPBENCH_BIN/$1"
	[[ -x "$p" ]] || die "tool $1 is not built ($p); run build_tools (scripts/run-comparison.sh does)"
	printf '%s\n' "$p"
}

# --- secrets -----------------------------------------------------------------

# random_secret prints a fresh 24-character alphanumeric secret.
random_secret() {
	local s=""
	while ((${#s} < 24)); do
		s+="$(head -c 48 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
	done
	printf '%s\n' "${s:0:24}"
}

# write_secret FILE [VALUE]: writes VALUE (default: a fresh random secret)
# to FILE with mode 0600. Never echoes it.
write_secret() {
	local file="$1"
	(
		umask 077
		rm -f "$file"
		if (($# > 1)); then printf '%s\n' "$2" >"$file"; else random_secret >"$file"; fi
	)
}

# curl_basic_config FILE USER SECRET_FILE: writes a curl --config file (0600)
# carrying Basic credentials, so the secret never appears in argv.
curl_basic_config() {
	local file="$1" user="$2" secret
	secret="$(<"$3")"
	(
		umask 077
		printf 'user = "%s:%s"\n' "$user" "$secret" >"$file"
	)
}

# script_help prints the calling script's header comment (line 2 up to the
# `set -o` line, without the leading "# ") on stdout: its --help.
script_help() {
	sed -n '2,/^set -o/p' "${BASH_SOURCE[-1]}" | sed -n 's/^# \{0,1\}//p'
}

# script_version ARG...: a --version among a script's arguments (before a
# "--", after which they are another command's) prints the script's name and
# the tree's revision (TOOLS_VERSION) on stdout and exits 0, nothing built.
# Every script a user runs calls it first.
script_version() {
	local a
	for a in "$@"; do
		case "$a" in
		--) return 0 ;;
		--version)
			printf '%s %s\n' "$(basename "$0")" "$TOOLS_VERSION"
			exit 0
			;;
		esac
	done
}

# --- processes and ports: the runstate tool (runstate --help) --------------
# A pidfile: the pid, then "START BOOT_ID" (docs/design-reference.md#environment); the run
# tool and coldstart write both lines.

# runstate ARGS... runs the built runstate tool; exits when it is not built.
runstate() {
	local t
	t="$(tool runstate)" || exit 1
	"$t" "$@"
}
# free_port prints a loopback TCP port the kernel reports free right now.
free_port() { runstate free-port; }
# stop_group PIDFILE [TIMEOUT_S]: TERM the process group PIDFILE's process leads,
# KILL it after TIMEOUT_S (default 20); removes PIDFILE, or dies naming survivors.
stop_group() { runstate stop-group --timeout "${2:-20}s" "$1" || exit 1; }

# make_tmpdir PREFIX prints a fresh scratch directory under $IDPBENCH_TMP.
make_tmpdir() {
	mktemp -d "$IDPBENCH_TMP/$1.XXXXXX"
}

# --- placement: the driver and the server on disjoint CPU sets --------------
# (docs/design-methodology.md#placement)

# pin_prefix driver|server prints the command prefix that pins to that
# role's CPUs (taskset -c LIST), one word a line, or nothing when unpinned.
pin_prefix() {
	local set
	case "$1" in
	driver) set="${IDPBENCH_DRIVER_CPUS:-}" ;;
	server) set="${IDPBENCH_SERVER_CPUS:-}" ;;
	*) die "pin_prefix: unknown role $1 (want driver or server)" ;;
	esac
	[[ -z "$set" ]] || printf '%s\n' taskset -c "$set"
}

# pinned driver|server CMD... runs CMD on that role's CPUs, or as it is when not
# pinned. CMD is a program (taskset execs it), never a shell function.
pinned() {
	local pre=()
	mapfile -t pre < <(pin_prefix "$1")
	shift
	"${pre[@]}" "$@"
}
