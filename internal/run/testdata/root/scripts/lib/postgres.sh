# shellcheck shell=bash
# postgres.sh stand-in for internal/run's tests: a directory, no server.
# pg_up records a postmaster.pid naming a process that has exited.
pg_make_dir() { mktemp -d "$IDPBENCH_TMP/idpbench-pg.XXXXXX"; }
pg_up() {
	mkdir -p "$1/data"
	sh -c 'echo $$' >"$1/data/postmaster.pid"
	echo "PG_DIR='$1'" >"$1/pg.env"
	echo "pg_up $1" >>"$FAKE_CALLS"
}
pg_down() {
	echo "pg_down $IDPBENCH_PG_DIR" >>"$FAKE_CALLS"
	rm -rf "$IDPBENCH_PG_DIR"
}
