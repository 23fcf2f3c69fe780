#!/bin/bash
# docker-entrypoint.sh of idpbench's local PostgreSQL image: what the official
# image's entrypoint (https://hub.docker.com/_/postgres, "Environment
# Variables", "Initialization scripts") does for what compose.postgres.yml
# uses. As root: owns PGDATA and the socket directory, then runs itself as
# postgres. On an empty PGDATA: initdb with POSTGRES_USER as the superuser
# and POSTGRES_PASSWORD, listen on every address with scram-sha-256 for
# TCP (local socket: trust), a temporary server on the socket only (so a
# health check over TCP fails until initialisation is done), POSTGRES_DB
# created, /docker-entrypoint-initdb.d's *.sql run in it (*.sh run or
# sourced), the server stopped. Then the command (postgres ARGS...).
set -o errexit -o nounset -o pipefail

export PGDATA="${PGDATA:-/var/lib/postgresql/data}"
if [[ "${1:-}" == -* ]]; then set -- postgres "$@"; fi
[[ "${1:-}" == postgres ]] || exec "$@"

if [[ "$(id -u)" == 0 ]]; then
	mkdir -p "$PGDATA" /var/run/postgresql
	chown postgres:postgres "$PGDATA" /var/run/postgresql
	chmod 700 "$PGDATA"
	exec setpriv --reuid=postgres --regid=postgres --init-groups "${BASH_SOURCE[0]}" "$@"
fi

if [[ ! -s "$PGDATA/PG_VERSION" ]]; then
	: "${POSTGRES_PASSWORD:?the local PostgreSQL image, as the official one, wants POSTGRES_PASSWORD}"
	user="${POSTGRES_USER:-postgres}"
	db="${POSTGRES_DB:-$user}"
	initdb --username="$user" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") -D "$PGDATA"
	printf '%s\n' "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
	printf '%s\n' 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
	shift
	opts=""
	if (($# > 0)); then opts="$(printf '%q ' "$@")"; fi
	pg_ctl -D "$PGDATA" -w -o "$opts -c listen_addresses='' -p 5432" start
	psql=(psql -v ON_ERROR_STOP=1 --username "$user" --no-password --no-psqlrc)
	if [[ "$db" != postgres ]]; then
		"${psql[@]}" --dbname postgres --set db="$db" <<<'CREATE DATABASE :"db";'
	fi
	for f in /docker-entrypoint-initdb.d/*; do
		case "$f" in
		*.sh) if [[ -x "$f" ]]; then "$f"; else
			# shellcheck disable=SC1090
			. "$f"
		fi ;;
		*.sql) "${psql[@]}" --dbname "$db" -f "$f" ;;
		*) [[ ! -e "$f" ]] || echo "docker-entrypoint.sh: ignoring $f" >&2 ;;
		esac
	done
	pg_ctl -D "$PGDATA" -m fast -w stop
	set -- postgres "$@"
fi
exec "$@"
