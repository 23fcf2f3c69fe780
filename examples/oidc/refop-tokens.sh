#!/usr/bin/env bash
# refop-tokens.sh ISSUER WEB_SECRET_FILE: prints IDPBENCH_POOL_COUNT user
# tokens (IDPBENCH_POOL_EMIT: access_token or refresh_token, default
# access_token) of the reference OP's demo user, one a line: a TOKEN_COMMAND
# for products/oidc/adapter (examples/oidc/refop.env).
#
# Each token is one headless login through the example's login page:
# GET /auth -> 302 /login/username?authRequestID=ID; POST /login/username
# (demo user test-user@localhost / verysecure, public example values) ->
# callback -> 302 redirect_uri?code=; POST /oauth/token with the web client.
# Four logins run at a time. Credentials travel in curl config files (0600),
# codes on stdin: nothing secret in argv.
set -o errexit -o nounset -o pipefail

(($# == 2)) || { echo "usage: refop-tokens.sh ISSUER WEB_SECRET_FILE" >&2; exit 2; }
ISSUER="$1"
N="${IDPBENCH_POOL_COUNT:-1}"
EMIT="${IDPBENCH_POOL_EMIT:-access_token}"
REDIRECT=http://localhost:9999/auth/callback # the web client's registered redirect URI
WORKERS=4
[[ "$N" =~ ^[1-9][0-9]*$ ]] || { echo "refop-tokens.sh: IDPBENCH_POOL_COUNT=$N: want a count" >&2; exit 2; }

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
(
	umask 077
	printf 'user = "web:%s"\n' "$(tr -d '\n' <"$2")" >"$TMP/web.curl"
	printf '%s\n' 'data-urlencode = "username=test-user@localhost"' \
		'data-urlencode = "password=verysecure"' >"$TMP/login.curl"
)

# login I prints the EMIT token of one login.
login() {
	local i="$1" loc id code
	loc="$(curl -sS -o /dev/null -w '%{redirect_url}' -G --data-urlencode client_id=web \
		--data-urlencode response_type=code --data-urlencode "scope=openid offline_access" \
		--data-urlencode "redirect_uri=$REDIRECT" --data-urlencode "state=idpbench$i" "${ISSUER}auth")"
	[[ "$loc" =~ [?\&]authRequestID=([^\&]+) ]] || { echo "login $i: no auth request id" >&2; return 1; }
	id="${BASH_REMATCH[1]}"
	loc="$(curl -sS -o /dev/null -w '%{redirect_url}' --config "$TMP/login.curl" \
		--data-urlencode "id=$id" "${ISSUER}login/username")"
	[[ -n "$loc" ]] || { echo "login $i: the login page did not redirect" >&2; return 1; }
	loc="$(curl -sS -o /dev/null -w '%{redirect_url}' "$loc")"
	[[ "$loc" =~ [?\&]code=([^\&]+) ]] || { echo "login $i: no code in the callback" >&2; return 1; }
	code="${BASH_REMATCH[1]}"
	printf '%s' "$code" | curl -sS --fail-with-body --config "$TMP/web.curl" \
		--data grant_type=authorization_code --data-urlencode code@- \
		--data-urlencode "redirect_uri=$REDIRECT" "${ISSUER}oauth/token" |
		jq -er --arg e "$EMIT" '.[$e]'
}

# worker W: logins W, W+WORKERS, ... below N.
worker() {
	local i
	for ((i = $1; i < N; i += WORKERS)); do login "$i" || return 1; done >"$TMP/out.$1"
}

pids=()
for ((w = 0; w < WORKERS && w < N; w++)); do
	worker "$w" &
	pids+=("$!")
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
((failed == 0)) || { echo "refop-tokens.sh: a login failed" >&2; exit 1; }
cat "$TMP"/out.*
