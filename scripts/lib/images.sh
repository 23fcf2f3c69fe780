# shellcheck shell=bash
# images.sh: the images of compose mode when the official ones cannot be
# pulled: local equivalents built from the registries this machine reaches,
# by the engine DOCKER_HOST names (scripts/lib/dockerd.sh's). Source after
# common.sh. docs/design-reference.md#compose-mode.
#
# The compose files write each image as ${IDPBENCH_IMAGE_NAME:-OFFICIAL};
# images_prepare keeps the official image where the engine has it or can pull
# it (within IMAGES_PULL_TIMEOUT_S), else builds the local equivalent and
# exports the variable:
#
#   IDPBENCH_IMAGE_POSTGRES  postgres:15.18-bookworm, else idpbench/postgres:<host's postgresql-15>-local
#
# and each product's from its recipe, products/NAME/local/image.sh (Hydra's
# IDPBENCH_IMAGE_HYDRA; Keycloak's IDPBENCH_IMAGE_KEYCLOAK_BASE and the
# image its Dockerfile optimizes from it, IDPBENCH_IMAGE_KEYCLOAK), tagged
# -local; deploy/compose/README.md lists them.
# Every local image starts from idpbench/debian:bookworm-local: Debian
# bookworm made by mmdebstrap --variant=minbase from Debian's packages, then
# `docker import`; its recipes are deploy/compose/local/postgres (the shared
# PostgreSQL's) and each product's products/NAME/local/ (Dockerfile, image.sh),
# built with the classic builder (the docker CLI here has no buildx) on the
# host's network (apt inside the build). Each carries the labels
# org.idpbench.local (what it stands in for) and org.idpbench.key (the
# sha256 of its inputs: recipe, this script, parent image ID, versions,
# checksums), and is
# cached as `docker save` output in $IDPBENCH_CACHE/images/NAME-KEY.tar: a
# later run, on a new engine, loads it (same image ID) instead of building.

IMAGES_DIR="$IDPBENCH_ROOT/deploy/compose/local"
IMAGES_CACHE="$IDPBENCH_CACHE/images"
IMAGES_MIRROR="${IDPBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
IMAGES_PULL_TIMEOUT_S="${IDPBENCH_PULL_TIMEOUT_S:-300}"
IMAGES_BASE=idpbench/debian:bookworm-local
# The builds' contexts (hundreds of MB for a JVM product's), in a directory of
# the preparing process (images_prepare: IMAGES_TMP/PID, so that runs preparing
# at once keep theirs): removed by each build, and those of a process that
# died or was killed by the next images_prepare.
IMAGES_TMP="$IMAGES_CACHE/tmp"

# images_pullable REF succeeds when the engine has REF or pulls it within
# IMAGES_PULL_TIMEOUT_S; else it says why (the pull's last line) on stderr.
images_pullable() {
	local out
	docker image inspect "$1" >/dev/null 2>&1 && return 0
	if out="$(timeout "$IMAGES_PULL_TIMEOUT_S" docker pull -q "$1" 2>&1)"; then return 0; fi
	warn "cannot pull $1 (within ${IMAGES_PULL_TIMEOUT_S} s): $(tail -n 1 <<<"${out:-timed out}")"
	return 1
}

# images_key TEXT... prints the sha256 of the lines TEXT (a build's inputs).
images_key() { printf '%s\n' "$@" | sha256sum | cut -c1-64; }

# images_cached TAG KEY succeeds when the engine has TAG built from KEY,
# loading it from the cache when the engine has not.
images_cached() {
	local tag="$1" key="$2" tar
	[[ "$(docker image inspect --format '{{index .Config.Labels "org.idpbench.key"}}' "$tag" 2>/dev/null)" == "$key" ]] && return 0
	tar="$IMAGES_CACHE/$(images_file "$tag" "$key")"
	[[ -s "$tar" ]] || return 1
	log "images: loading $tag from $tar"
	docker load -q -i "$tar" >/dev/null || return 1
	[[ "$(docker image inspect --format '{{index .Config.Labels "org.idpbench.key"}}' "$tag" 2>/dev/null)" == "$key" ]]
}

# images_file TAG KEY prints the cache file's name of TAG built from KEY.
images_file() { printf '%s-%s.tar\n' "$(tr '/:' '__' <<<"$1")" "${2:0:16}"; }

# images_save TAG KEY writes TAG to the cache (atomically).
images_save() {
	local out
	out="$IMAGES_CACHE/$(images_file "$1" "$2")"
	mkdir -p "$IMAGES_CACHE"
	# a file of this process's first (another run may save the same image at once)
	if ! { docker save -o "$out.tmp.$BASHPID" "$1" && mv "$out.tmp.$BASHPID" "$out"; }; then
		rm -f "$out.tmp.$BASHPID"
		return 1
	fi
	# The same tag built from other inputs before: no run loads it again.
	find "$IMAGES_CACHE" -maxdepth 1 -name "$(tr '/:' '__' <<<"$1")-*.tar" ! -name "$(basename "$out")" -delete
}

# images_base builds (or loads) idpbench/debian:bookworm-local.
images_base() {
	local opts=(--variant=minbase --mode=root --format=tar '--aptopt=Acquire::Check-Valid-Until "false"')
	local key tmp t0=$SECONDS
	key="$(images_key "mmdebstrap ${opts[*]} bookworm $IMAGES_MIRROR" "$(dpkg-query -W -f '${Version}' mmdebstrap 2>/dev/null)")"
	if images_cached "$IMAGES_BASE" "$key"; then return 0; fi
	ensure_pkg mmdebstrap mmdebstrap --no-install-recommends
	tmp="$(mktemp -d "$IMAGES_TMP/base.XXXXXX")"
	log "images: mmdebstrap ${opts[*]} bookworm $IMAGES_MIRROR (about 2 min)"
	mmdebstrap "${opts[@]}" bookworm "$tmp/rootfs.tar" "$IMAGES_MIRROR" >"$tmp/mmdebstrap.log" 2>&1 ||
		{ rm -rf "$tmp"; die "images: mmdebstrap failed: $(tail -n 3 "$tmp/mmdebstrap.log" | tr '\n' ' ')"; }
	docker import --change 'LABEL org.idpbench.local="Debian bookworm, mmdebstrap --variant=minbase"' \
		--change "LABEL org.idpbench.key=$key" --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["bash"]' "$tmp/rootfs.tar" "$IMAGES_BASE" >/dev/null ||
		{ rm -rf "$tmp"; die "images: docker import of the bookworm base failed"; }
	rm -rf "$tmp"
	images_save "$IMAGES_BASE" "$key"
	log "images: built $IMAGES_BASE in $((SECONDS - t0)) s"
}

# images_build RECIPE TAG OFFICIAL CONTEXT KEYTEXT [BUILD-ARG]... builds (or
# loads) TAG from the folder RECIPE's Dockerfile on the base, the context
# CONTEXT, KEYTEXT the inputs that are not files of the recipe (every file
# of RECIPE is: its Dockerfile, a product's image.sh).
images_build() {
	local recipe="$1" tag="$2" official="$3" ctx="$4" keytext="$5" key t0=$SECONDS a args=()
	shift 5
	# The recipe: its folder's files and this script, which fills the context.
	key="$(images_key "$(docker image inspect --format '{{.Id}}' "$IMAGES_BASE")" "$keytext" "$@" \
		"$(cd "$recipe" && sha256sum -- *)" "$(sha256sum <"${BASH_SOURCE[0]}")")"
	if images_cached "$tag" "$key"; then return 0; fi
	for a in "$@"; do args+=(--build-arg "$a"); done
	log "images: building $tag (the local equivalent of $official)"
	DOCKER_BUILDKIT=0 docker build -q --network host -f "$recipe/Dockerfile" \
		--build-arg "BASE=$IMAGES_BASE" "${args[@]}" --label "org.idpbench.local=$official" \
		--label "org.idpbench.key=$key" -t "$tag" "$ctx" >"$ctx/../build.log" 2>&1 ||
		die "images: building $tag failed: $(tail -n 5 "$ctx/../build.log" | tr '\n' ' ')"
	images_save "$tag" "$key"
	log "images: built $tag in $((SECONDS - t0)) s"
}

# images_postgres: PostgreSQL 15 from Debian's packages at the host's version.
images_postgres() {
	local v tmp
	v="$(dpkg-query -W -f '${Version}' postgresql-15 2>/dev/null)" ||
		die "images: no postgresql-15 on this machine, whose version the local image would take (native mode's)"
	tmp="$(mktemp -d "$IMAGES_TMP/postgres.XXXXXX")"
	mkdir "$tmp/ctx"
	cp "$IMAGES_DIR/postgres/docker-entrypoint.sh" "$tmp/ctx/"
	images_build "$IMAGES_DIR/postgres" "idpbench/postgres:${v%%-*}-local" "$1" "$tmp/ctx" "postgresql-15 $v" "PG_VERSION=$v"
	rm -rf "$tmp"
	export IDPBENCH_IMAGE_POSTGRES="idpbench/postgres:${v%%-*}-local"
}

# images_products prints the products with a local image recipe
# (products/NAME/local/image.sh), one a line.
images_products() {
	local f
	for f in "$IDPBENCH_ROOT"/products/*/local/image.sh; do
		[[ -f "$f" ]] && basename "$(dirname "$(dirname "$f")")"
	done
	return 0
}

# images_prepare [PRODUCT...]: the images of the products' compose files
# (default: every product with a recipe, images_products) and their
# PostgreSQL's, official where the engine has or pulls them, else local
# equivalents (the variables exported). A product's recipe is its folder's
# local/: image.sh defines image_official (prints the official image its
# compose file names) and image_local OFFICIAL (builds the equivalent with
# images_build, exports its variables), beside its Dockerfile. Products
# without one are left to their compose install (Zitadel: a pull that fails
# makes it N/A).
images_prepare() {
	local p f official all t0=$SECONDS
	if (($# == 0)); then
		mapfile -t all < <(images_products)
		set -- "${all[@]}"
	fi
	local d
	for d in "$IMAGES_CACHE/tmp"/*; do
		[[ "${d##*/}" =~ ^[0-9]+$ ]] && kill -0 "${d##*/}" 2>/dev/null && continue
		rm -rf "$d"
	done
	IMAGES_TMP="$IMAGES_CACHE/tmp/$BASHPID"
	mkdir -p "$IMAGES_TMP"
	if ! images_pullable postgres:15.18-bookworm; then
		images_base
		images_postgres postgres:15.18-bookworm
	fi
	for p in "$@"; do
		f="$IDPBENCH_ROOT/products/$p/local/image.sh"
		[[ -f "$f" ]] || continue
		# shellcheck source=/dev/null # each product's, checked by devtest static
		source "$f"
		official="$(image_official)"
		images_pullable "$official" || { images_base && image_local "$official"; }
	done
	log "images ready in $((SECONDS - t0)) s:$(env | grep '^IDPBENCH_IMAGE_' | sort | sed 's/^/ /' | tr '\n' ' ')"
}
