# shellcheck shell=bash
# proto.sh: Zitadel's API definitions, the npm package @zitadel/proto,
# fetched once into the project's cache for the definition check
# (products/zitadel/zitadeldefs). Source it after scripts/lib/common.sh; it defines
# functions and variables only and runs nothing.

ZITADEL_PROTO_VERSION=1.3.1 # must equal zitadeldefs.Version

# zitadel_proto_dir prints the unpacked package's directory (the one with
# package.json), packing it with npm on first use: npm pack into a scratch
# directory, unpack there, then one rename into the cache, so that an
# interrupted fetch leaves nothing that looks complete.
zitadel_proto_dir() {
	local dest="$IDPBENCH_CACHE/zitadel-proto/$ZITADEL_PROTO_VERSION"
	if [[ -f "$dest/package/package.json" ]]; then
		printf '%s\n' "$dest/package"
		return 0
	fi
	require_cmd npm tar
	local tmp
	tmp="$(mktemp -d "$IDPBENCH_TMP/zitadel-proto.XXXXXX")"
	log "fetching @zitadel/proto@$ZITADEL_PROTO_VERSION with npm into $dest"
	if ! (cd "$tmp" && npm pack --silent "@zitadel/proto@$ZITADEL_PROTO_VERSION" >pack.out 2>&1 &&
		tar -xzf "zitadel-proto-$ZITADEL_PROTO_VERSION.tgz" &&
		jq -e --arg v "$ZITADEL_PROTO_VERSION" '.name == "@zitadel/proto" and .version == $v' package/package.json >/dev/null); then
		cat "$tmp/pack.out" >&2 || true
		rm -rf "$tmp"
		die "cannot fetch @zitadel/proto@$ZITADEL_PROTO_VERSION with npm"
	fi
	mkdir -p "$(dirname "$dest")"
	rm -f "$tmp/pack.out" "$tmp/zitadel-proto-$ZITADEL_PROTO_VERSION.tgz"
	mv -T "$tmp" "$dest" 2>/dev/null || rm -rf "$tmp" # another run won the rename: keep its copy
	[[ -f "$dest/package/package.json" ]] || die "zitadel-proto: $dest/package/package.json missing after the fetch"
	printf '%s\n' "$dest/package"
}
