# shellcheck shell=bash
# compose.sh: Docker compose mode of the product adapters, on each product's
# compose file (products/NAME/compose.yml, its entry's ComposeFile) and the
# shared parts in deploy/compose (the PostgreSQL they extend, .env.example).
# Source after common.sh (adapter.sh does). Tested with a stand-in compose
# command (deploy/compose/mode_test.go) and for real by scripts/test-compose.sh
# (Hydra and Keycloak on our engine, local equivalents of the official images).
# The mode and its rules: docs/design-reference.md#compose-mode.

COMPOSE_DIR="$IDPBENCH_ROOT/deploy/compose"

# docker_engine succeeds when a Docker engine answers (IDPBENCH_DOCKER=true|false stands in).
docker_engine() {
	case "${IDPBENCH_DOCKER:-}" in
	true) return 0 ;;
	false) return 1 ;;
	"") command -v docker >/dev/null 2>&1 && timeout 20 docker info >/dev/null 2>&1 ;;
	*) die "IDPBENCH_DOCKER=$IDPBENCH_DOCKER: want true or false (or unset: ask docker info)" ;;
	esac
}

# idpbench_mode prints native or compose (IDPBENCH_MODE, else compose when docker_engine).
idpbench_mode() {
	case "${IDPBENCH_MODE:-}" in
	native | compose) echo "$IDPBENCH_MODE" ;;
	"") if docker_engine; then echo compose; else echo native; fi ;;
	*) die "IDPBENCH_MODE=$IDPBENCH_MODE: want native or compose" ;;
	esac
}

# compose_mode STATE succeeds when the product in STATE was brought up in compose mode.
compose_mode() {
	[[ "$(state_get_opt "$1" MODE)" == compose ]]
}

# compose_cmd prints the compose command, one word a line:
# $IDPBENCH_DOCKER_COMPOSE (a compose v2 binary), else `docker compose`,
# else docker-compose, else compose_cli_install's build.
compose_cmd() {
	if [[ -n "${IDPBENCH_DOCKER_COMPOSE:-}" ]]; then
		echo "$IDPBENCH_DOCKER_COMPOSE"
	elif command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then
		printf '%s\n' docker compose
	elif command -v docker-compose >/dev/null 2>&1; then
		echo docker-compose
	elif [[ -x "$IDPBENCH_CACHE/bin/docker-compose-$COMPOSE_CLI_VERSION" ]]; then
		echo "$IDPBENCH_CACHE/bin/docker-compose-$COMPOSE_CLI_VERSION"
	else
		die "compose mode: no compose command (docker compose, docker-compose, IDPBENCH_DOCKER_COMPOSE or compose_cli_install's build)"
	fi
}

# The Compose v2 CLI compose mode builds when none is found: Docker Compose
# from the Go module proxy (its major is v5 since 2026; it is the same
# `docker compose` command), at a pinned version.
COMPOSE_CLI_MODULE=github.com/docker/compose/v5
COMPOSE_CLI_VERSION=v5.6.0

# compose_cli_install makes sure a Compose v2 command is there: when
# IDPBENCH_DOCKER_COMPOSE is unset and neither `docker compose` nor
# docker-compose answers, it builds $COMPOSE_CLI_MODULE@$COMPOSE_CLI_VERSION
# into $IDPBENCH_CACHE/bin (once; 4 min on 2 busy cores) and exports
# IDPBENCH_DOCKER_COMPOSE, which compose_cmd honours. `go install
# MODULE/cmd@VERSION` is refused (compose's go.mod has exclude directives),
# so it builds inside the module's own source from the module cache, as the
# main module: its go.mod and go.sum as they are.
compose_cli_install() {
	local bin="$IDPBENCH_CACHE/bin/docker-compose-$COMPOSE_CLI_VERSION" buildlog src tmp
	[[ -z "${IDPBENCH_DOCKER_COMPOSE:-}" ]] || return 0
	if command -v docker >/dev/null 2>&1 && docker compose version >/dev/null 2>&1; then return 0; fi
	if command -v docker-compose >/dev/null 2>&1 && docker-compose version >/dev/null 2>&1; then return 0; fi
	if [[ ! -x "$bin" ]]; then
		require_cmd go
		buildlog="$IDPBENCH_CACHE/docker-compose-$COMPOSE_CLI_VERSION-build.log"
		mkdir -p "$(dirname "$bin")"
		log "building Docker Compose $COMPOSE_CLI_VERSION from the Go module proxy (minutes on 2 cores; log: $buildlog)"
		tmp="$(make_tmpdir idpbench-compose-build)"
		if ! (
			set -o errexit
			src="$(go mod download -json "$COMPOSE_CLI_MODULE@$COMPOSE_CLI_VERSION" | jq -r .Dir)"
			cp -r "$src" "$tmp/src"
			chmod -R u+w "$tmp/src"
			cd "$tmp/src"
			CGO_ENABLED=0 go build -trimpath -buildvcs=false \
				-ldflags "-s -w -X $COMPOSE_CLI_MODULE/internal.Version=$COMPOSE_CLI_VERSION" -o "$tmp/docker-compose" ./cmd
		) >"$buildlog" 2>&1; then
			rm -rf "$tmp"
			die "building Docker Compose $COMPOSE_CLI_VERSION failed, see $buildlog"
		fi
		mv "$tmp/docker-compose" "$bin"
		rm -rf "$tmp"
	fi
	export IDPBENCH_DOCKER_COMPOSE="$bin"
	log "compose command: $bin ($("$bin" version --short 2>/dev/null || echo "version unknown"))"
}

# compose_file NAME prints the compose file of product NAME, in its folder
# (the product contract holds its entry's ComposeFile to it).
compose_file() {
	local f="$IDPBENCH_ROOT/products/$1/compose.yml"
	[[ -f "$f" ]] || die "compose mode: no $f"
	printf '%s\n' "$f"
}

# compose_run FILE ENVFILE ARGS... runs compose on FILE with ENVFILE. The
# project directory is FILE's folder, which its relative paths (a build
# context) resolve against, also with the placement override as a second -f.
compose_run() {
	local file="$1" envfile="$2" words
	shift 2
	mapfile -t words < <(compose_cmd)
	((${#words[@]} > 0)) || return 1
	"${words[@]}" --project-directory "$(dirname "$file")" -f "$file" --env-file "$envfile" "$@"
}

# compose STATE ARGS... runs compose on the product's file, env file and placement override.
compose() {
	local state="$1" over=()
	shift
	mapfile -t over < <(compose_override_args "$state")
	compose_run "$(state_get "$state" COMPOSE_FILE)" "$(state_secret "$state" compose.env)" "${over[@]}" "$@"
}

# compose_override_args STATE prints "-f OVERRIDE", one word a line, when
# the product has a placement override, else nothing.
compose_override_args() {
	local f="$1/compose.placement.yml"
	[[ ! -s "$f" ]] || printf '%s\n' -f "$f"
}

# compose_placement STATE: with IDPBENCH_SERVER_CPUS, STATE/compose.placement.yml
# giving every service of the product's file `cpuset:` that list; else none.
compose_placement() {
	"$(tool provision)" compose placement --cpus "${IDPBENCH_SERVER_CPUS:-}" \
		"$(state_get "$1" COMPOSE_FILE)" -o "$1/compose.placement.yml"
}

# compose_install NAME builds and pulls the images of products/NAME/compose.yml
# (a compose command first: compose_cli_install); the
# files want their secrets even to build: a throwaway env file of placeholders
# stands in.
compose_install() {
	local file tmp rc=0 words why
	compose_cli_install
	file="$(compose_file "$1")"
	tmp="$(make_tmpdir idpbench-compose-install)"
	sed -n 's/^\([A-Z_][A-Z0-9_]*\)=$/\1=placeholder-not-a-secret-0000/p' "$COMPOSE_DIR/.env.example" >"$tmp/env"
	log "compose: building and pulling the images of $1's $(basename "$file")"
	compose_run "$file" "$tmp/env" build >"$tmp/out" 2>&1 || rc=$?
	# --policy missing: an image the engine has (a local equivalent, which no
	# registry serves) is not asked for. An unreachable registry fails at once
	# (the engine's lookup); one that does not answer is cut off after
	# IDPBENCH_PULL_TIMEOUT_S (300), so a pull never hangs the run.
	if ((rc == 0)); then
		mapfile -t words < <(compose_cmd)
		timeout "${IDPBENCH_PULL_TIMEOUT_S:-300}" "${words[@]}" --project-directory "$(dirname "$file")" -f "$file" \
			--env-file "$tmp/env" pull --ignore-buildable --policy missing >>"$tmp/out" 2>&1 || rc=$?
		((rc != 124)) || echo "no answer within ${IDPBENCH_PULL_TIMEOUT_S:-300} s" >>"$tmp/out"
	fi
	cat "$tmp/out" >&2
	why="$(grep -v '^ *$' "$tmp/out" | tail -n 1)"
	rm -rf "$tmp"
	((rc == 0)) || die "compose: building or pulling the images of $1's $(basename "$file") failed: ${why:-no output}"
}

# compose_init STATE NAME DB [KEY=VALUE]...: records compose mode, writes the run's
# env file (0600: the database password and port, the KEY=VALUE lines) and secrets/pgpass.
compose_init() {
	local state="$1" name="$2" db="$3" pgport pw env
	shift 3
	state_set "$state" MODE compose
	state_set "$state" COMPOSE_FILE "$(compose_file "$name")"
	state_set "$state" COMPOSE_DB "$db"
	pgport="$(free_port)"
	state_set "$state" COMPOSE_PG_PORT "$pgport"
	write_secret "$(state_secret "$state" compose-pg)"
	pw="$(<"$(state_secret "$state" compose-pg)")"
	env="$(state_secret "$state" compose.env)"
	(
		umask 077
		printf '%s\n' "IDPBENCH_PG_PASSWORD=$pw" "IDPBENCH_PG_PORT=$pgport" "$@" >"$env"
		printf '127.0.0.1:%s:*:idpbench:%s\n' "$pgport" "$pw" >"$(state_secret "$state" pgpass)"
	)
	compose_placement "$state"
}

# compose_start STATE MODE READY_URL TIMEOUT_S: the attached `compose up` under
# coldstart; mode A drops the database volume first. A container that exits
# non-zero ends it (--abort-on-container-failure), so a crashing product fails
# the start at once, not after TIMEOUT_S (a one-shot job exiting 0 does not).
compose_start() {
	local state="$1" mode="$2" ready="$3" timeout="$4" file words over=()
	if [[ "$mode" == A ]]; then
		compose "$state" down -v --remove-orphans >&2 || return 1
	fi
	file="$(state_get "$state" COMPOSE_FILE)"
	mapfile -t words < <(compose_cmd)
	((${#words[@]} > 0)) || return 1
	mapfile -t over < <(compose_override_args "$state")
	COLDSTART_CONTAINERS="$(compose_product_containers "$state")" || return 1
	COLDSTART_CONTAINERS="$COLDSTART_CONTAINERS" adapter_coldstart "$state" "$mode" "$ready" "$timeout" "${words[@]}" \
		--project-directory "$(dirname "$file")" -f "$file" "${over[@]}" \
		--env-file "$(state_secret "$state" compose.env)" up --no-build --no-color --abort-on-container-failure || return 1
	compose_images "$state"
}

# compose_product_containers STATE prints the container names of the
# product's services, comma-separated: every service of its file but its
# database ("postgres"), whose memory native mode does not count in the
# product's either. Cold start's peak is theirs (coldstart --containers).
compose_product_containers() {
	local names
	names="$(compose "$1" config --format json |
		jq -r '[.services | to_entries[] | select(.key != "postgres") | .value.container_name // empty] | join(",")')" ||
		die "compose config of $PRODUCT failed, so its containers are not known"
	[[ -n "$names" ]] || die "compose config of $PRODUCT names no container_name of a service but postgres"
	printf '%s\n' "$names"
}

# compose_images STATE writes STATE/images.json, the image every container of
# the project ran (provision meta reads it into the meta's images): service,
# container, ref, id (the image ID: sha256 of its configuration), origin
# "local" with stands_for when the image carries images.sh's org.idpbench.local
# label, else "official".
compose_images() {
	local state="$1" ids imgs tmp
	mapfile -t ids < <(compose "$state" ps -a -q)
	((${#ids[@]} > 0)) || die "compose ps lists no container of the project, so no image to record"
	tmp="$(make_tmpdir idpbench-compose-images)"
	docker inspect "${ids[@]}" >"$tmp/containers.json" || { rm -rf "$tmp"; die "docker inspect of the project's containers failed"; }
	mapfile -t imgs < <(jq -r '.[].Image' "$tmp/containers.json" | sort -u)
	docker image inspect "${imgs[@]}" >"$tmp/images.json" || { rm -rf "$tmp"; die "docker image inspect failed"; }
	jq --slurpfile imgs "$tmp/images.json" '
		($imgs[0] | map({key: .Id, value: (.Config.Labels["org.idpbench.local"] // "")}) | from_entries) as $local
		| [.[] | {service: .Config.Labels["com.docker.compose.service"], container: (.Name | ltrimstr("/")),
			ref: .Config.Image, id: .Image}
			| . + (if ($local[.id] // "") != "" then {origin: "local", stands_for: $local[.id]} else {origin: "official"} end)]
		| sort_by(.service)' "$tmp/containers.json" >"$state/images.json.tmp" &&
		mv "$state/images.json.tmp" "$state/images.json"
	rm -rf "$tmp"
}

# compose_stop STATE ends the attached `compose up` (TERM), then `compose stop`.
compose_stop() {
	local state="$1"
	stop_group "$(state_pidfile "$state" "$PRODUCT")" 60
	compose "$state" stop >&2 || warn "compose stop failed"
}

# compose_down STATE: stop, `compose down -v`; fails naming any container left.
compose_down() {
	local state="$1" left
	compose_stop "$state"
	compose "$state" down -v --remove-orphans >&2 || warn "compose down failed"
	# A failing `compose ps` cannot tell that nothing is left: that is an error too.
	left="$(compose "$state" ps -a -q)" ||
		die "compose ps failed after compose down, so whether containers are left is unknown (its error is above)"
	left="${left//$'\n'/ }"
	[[ -z "${left// /}" ]] || die "containers left after compose down: ${left% }"
}
