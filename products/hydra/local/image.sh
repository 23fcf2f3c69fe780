# shellcheck shell=bash
# image.sh: Hydra's local image recipe for compose mode, sourced by
# scripts/lib/images.sh's images_prepare (its images_build, images_base and
# variables); the Dockerfile beside it. Defines functions only.

# image_official prints the official image products/hydra/compose.yml names.
image_official() { printf 'oryd/hydra:%s\n' "$("$IDPBENCH_ROOT/products/hydra/adapter" version)"; }

# image_local OFFICIAL: native mode's Hydra build (installed when missing).
image_local() {
	local v bin tmp
	v="$("$IDPBENCH_ROOT/products/hydra/adapter" version)"
	bin="$IDPBENCH_CACHE/bin/hydra-$v"
	[[ -x "$bin" ]] || IDPBENCH_MODE=native "$IDPBENCH_ROOT/products/hydra/adapter" install
	tmp="$(mktemp -d "$IMAGES_TMP/hydra.XXXXXX")"
	mkdir "$tmp/ctx"
	cp "$bin" "$tmp/ctx/hydra"
	images_build "$(dirname "${BASH_SOURCE[0]}")" "idpbench/hydra:$v-local" "$1" "$tmp/ctx" "hydra $(sha256sum <"$bin" | cut -c1-64)"
	rm -rf "$tmp"
	export IDPBENCH_IMAGE_HYDRA="idpbench/hydra:$v-local"
}
