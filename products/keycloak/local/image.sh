# shellcheck shell=bash
# image.sh: Keycloak's local image recipe for compose mode, sourced by
# scripts/lib/images.sh's images_prepare (its images_build, images_base and
# variables); the Dockerfile beside it. Defines functions only.

# image_official prints the official image products/keycloak/Dockerfile
# optimizes (its compose file's base).
image_official() { printf 'quay.io/keycloak/keycloak:%s\n' "$("$IDPBENCH_ROOT/products/keycloak/adapter" version)"; }

# image_local OFFICIAL: native mode's distribution (from Maven Central, fetched by
# the native install when missing) and JDK, unpacked, not built.
image_local() {
	local v tarball txt jdk tmp
	v="$("$IDPBENCH_ROOT/products/keycloak/adapter" version)"
	tarball="$IDPBENCH_CACHE/keycloak/keycloak-quarkus-dist-$v.tar.gz"
	[[ -s "$tarball" ]] || IDPBENCH_MODE=native "$IDPBENCH_ROOT/products/keycloak/adapter" install
	txt="$("$(tool provision)" jdk --product keycloak)" || die "images: no JDK for Keycloak (provision jdk, above)"
	mapfile -t jdk <<<"$txt"
	tmp="$(mktemp -d "$IMAGES_TMP/keycloak.XXXXXX")"
	mkdir "$tmp/ctx"
	tar -xzf "$tarball" -C "$tmp/ctx" && mv "$tmp/ctx/keycloak-$v" "$tmp/ctx/keycloak"
	# Dereferenced: Debian's JDKs, Temurin's package too, link lib/security/cacerts
	# to /etc/ssl/certs/java/cacerts, which the image has not (Keycloak then
	# fails: "could not find the system truststore"); the image gets the file.
	cp -r -L --preserve=mode,timestamps "${jdk[0]}" "$tmp/ctx/jdk"
	images_build "$(dirname "${BASH_SOURCE[0]}")" "idpbench/keycloak:$v-local" "$1" "$tmp/ctx" \
		"keycloak $(sha256sum <"$tarball" | cut -c1-64)" "jdk ${jdk[1]} $(sha256sum <"${jdk[0]}/release" | cut -c1-64)" \
		"JAVA_HOME=${jdk[0]}"
	rm -rf "$tmp"
	export IDPBENCH_IMAGE_KEYCLOAK_BASE="idpbench/keycloak:$v-local"
	export IDPBENCH_IMAGE_KEYCLOAK="idpbench/keycloak:$v-local-optimized"
}
