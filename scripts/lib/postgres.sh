# shellcheck shell=bash
# postgres.sh: one throwaway PostgreSQL cluster shared by every product, with
# identical settings for all of them. Source after common.sh. The cluster, its
# settings, users and state: docs/design-reference.md#the-shared-postgresql.

PG_DB_USER=idpbench

# Settings every product gets; the rest stay at PostgreSQL's defaults (the
# meta records them: provision meta, product.PGReported).
PG_SETTINGS=(
	"max_connections = 200"
	"shared_buffers = 256MB"
	"shared_preload_libraries = 'pg_stat_statements'"
	"pg_stat_statements.track = all"
)

# pg_bindir prints the directory of the newest PostgreSQL server binaries:
# pg_config --bindir, else /usr/lib/postgresql/<newest>/bin, else PATH.
pg_bindir() {
	local d
	if command -v pg_config >/dev/null 2>&1; then
		d="$(pg_config --bindir 2>/dev/null || true)"
		[[ -x "$d/initdb" && -x "$d/pg_ctl" ]] && { echo "$d"; return 0; }
	fi
	d="$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n1)"
	[[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]] && { echo "$d"; return 0; }
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(command -v pg_ctl)"
		return 0
	fi
	return 1
}

# pg_install makes sure server binaries exist: apt-get when root, else a message.
pg_install() {
	pg_bindir >/dev/null && return 0
	if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		log "PostgreSQL server not found; installing the OS package"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
		pg_bindir >/dev/null && return 0
	fi
	die "PostgreSQL server binaries (initdb, pg_ctl) not found: install the postgresql OS package (e.g. apt-get install postgresql) or put its bin directory on PATH"
}

# pg_osuser prints the OS user the server runs as, creating it when needed.
pg_osuser() {
	if [[ "$(id -u)" != 0 ]]; then
		id -un
		return 0
	fi
	local u="${IDPBENCH_PG_OSUSER:-}"
	if [[ -z "$u" ]]; then
		if getent passwd postgres >/dev/null; then u=postgres; else u=idpbench; fi
	fi
	if ! getent passwd "$u" >/dev/null; then
		log "creating system user $u to run PostgreSQL (initdb refuses root)"
		useradd --system --no-create-home --shell /usr/sbin/nologin "$u"
	fi
	echo "$u"
}

# pg_as USER CMD... runs CMD as USER (directly when that is us).
pg_as() {
	local u="$1"
	shift
	if [[ "$(id -un)" == "$u" ]]; then "$@"; else runuser -u "$u" -- "$@"; fi
}

# pg_make_dir prints a fresh directory for a cluster, owned by the server user.
pg_make_dir() {
	local dir u
	u="$(pg_osuser)"
	dir="$(make_tmpdir idpbench-pg)"
	[[ "$(id -un)" == "$u" ]] || chown "$u" "$dir"
	echo "$dir"
}

# pg_env loads the state of the cluster at $IDPBENCH_PG_DIR.
pg_env() {
	[[ -n "${IDPBENCH_PG_DIR:-}" && -s "$IDPBENCH_PG_DIR/pg.env" ]] ||
		die "no PostgreSQL cluster: IDPBENCH_PG_DIR is unset or has no pg.env (pg_up first)"
	# shellcheck disable=SC1091
	source "$IDPBENCH_PG_DIR/pg.env"
}

# pg_up DIR: initialise and start a cluster in DIR (empty, owned by the server user)
# on a free loopback port, on the server CPUs; exports IDPBENCH_PG_DIR=DIR.
pg_up() {
	local dir="$1" bindir osuser port pin=()
	pg_install
	bindir="$(pg_bindir)"
	osuser="$(pg_osuser)"
	pg_as "$osuser" test -w "$dir" || die "$dir is not writable by $osuser (use pg_make_dir)"
	port="$(free_port)"
	log "PostgreSQL: initdb in $dir/data as OS user $osuser ($bindir)"
	pg_as "$osuser" "$bindir/initdb" -D "$dir/data" -U "$PG_DB_USER" --auth=reject \
		--encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 ||
		die "initdb failed, see $dir/initdb.log"
	pg_as "$osuser" mkdir -p "$dir/sock"
	pg_configure "$dir" "$osuser" "$port"
	log "PostgreSQL: starting on 127.0.0.1:$port"
	mapfile -t pin < <(pin_prefix server)
	pg_as "$osuser" "${pin[@]}" "$bindir/pg_ctl" start -w -t 60 -D "$dir/data" -l "$dir/postgres.log" >/dev/null ||
		die "PostgreSQL did not start, see $dir/postgres.log"
	cat >"$dir/pg.env" <<-EOF
		PG_DIR='$dir'
		PG_BINDIR='$bindir'
		PG_OSUSER='$osuser'
		PG_PORT='$port'
	EOF
	IDPBENCH_PG_DIR="$dir"
	export IDPBENCH_PG_DIR
	"$(tool readback)" --product postgresql --listeners "$dir/data/postmaster.pid" >/dev/null ||
		die "PostgreSQL must listen on loopback only (see above)"
	pg_psql postgres -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null
}

# pg_configure DIR OSUSER PORT writes the settings and the access rules.
pg_configure() {
	local dir="$1" osuser="$2" port="$3" s
	{
		echo "# idpbench: identical for every product"
		echo "listen_addresses = '127.0.0.1'"
		echo "port = $port"
		echo "unix_socket_directories = '$dir/sock'"
		for s in "${PG_SETTINGS[@]}"; do echo "$s"; done
	} | pg_as "$osuser" tee -a "$dir/data/postgresql.conf" >/dev/null
	printf '%s\n' \
		"local all $PG_DB_USER trust" \
		"host all $PG_DB_USER 127.0.0.1/32 trust" |
		pg_as "$osuser" tee "$dir/data/pg_hba.conf" >/dev/null
}

# pg_psql DB ARGS... runs psql against the cluster (no psqlrc, stop on error).
pg_psql() {
	local db="$1"
	shift
	pg_env
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PG_PORT" -U "$PG_DB_USER" -d "$db" "$@"
}

# pg_createdb NAME creates database NAME with pg_stat_statements.
pg_createdb() {
	local name="$1"
	[[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || die "bad database name: $name"
	pg_psql postgres -c "CREATE DATABASE $name" >/dev/null
	pg_psql "$name" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements' >/dev/null
}

# pg_dropdb NAME drops database NAME, closing its sessions.
pg_dropdb() {
	local name="$1"
	[[ "$name" =~ ^[a-z_][a-z0-9_]*$ ]] || die "bad database name: $name"
	pg_psql postgres -c "DROP DATABASE IF EXISTS $name WITH (FORCE)" >/dev/null
}

# pg_dsn NAME prints the DSN products use.
pg_dsn() {
	pg_env
	printf 'postgres://%s@127.0.0.1:%s/%s?sslmode=disable\n' "$PG_DB_USER" "$PG_PORT" "$1"
}

# pg_down stops the cluster and deletes its directory; dies naming what is left.
pg_down() {
	[[ -n "${IDPBENCH_PG_DIR:-}" && -s "$IDPBENCH_PG_DIR/pg.env" ]] || return 0
	pg_env
	local pid=""
	[[ -s "$PG_DIR/data/postmaster.pid" ]] && pid="$(head -n1 "$PG_DIR/data/postmaster.pid")"
	log "PostgreSQL: stopping (pid ${pid:-?}, port $PG_PORT)"
	pg_as "$PG_OSUSER" "$PG_BINDIR/pg_ctl" stop -w -t 60 -m fast -D "$PG_DIR/data" >/dev/null ||
		warn "pg_ctl stop failed"
	if [[ -n "$pid" ]] && runstate alive --pid "$pid"; then die "PostgreSQL pid $pid is still running"; fi
	runstate port-free "$PG_PORT" || die "port $PG_PORT is still in use"
	rm -rf "$PG_DIR"
	[[ ! -e "$PG_DIR" ]] || die "PostgreSQL directory $PG_DIR is left"
	unset IDPBENCH_PG_DIR
}
