#!/usr/bin/env bash
# Real relying-party libraries against the built binary, by hand (tests/interop/README.md; the
# test command runs the same cases in the integration tests, on both stores): starts the
# local server (target/debug/token-service, built by `cargo build --workspace --bins`) on SQLite
# with demo data in a fresh directory, registers a relying party with target/debug/tokenctl,
# runs the Node driver (openid-client 6, dpop) and the Python driver (authlib) as that client
# and the demo user, and stops the server.
#
# Usage: infra/interop.sh
#   INTEROP_NODE_CASES / INTEROP_PYTHON_CASES   comma-separated case names (default: the lists
#                                               below), or `all`
#   INTEROP_SCOPE                               the scope the relying parties ask for
#
# The libraries are installed on first use by infra/relying-parties.sh into .cache/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# The cases the service passes; the integration tests (tests/integration/oidc_interop/) run the
# same ones on both stores. The drivers hold more (DPoP, private_key_jwt): add each here and
# there when its feature lands.
NODE_CASES="${INTEROP_NODE_CASES:-discovery,oidcc-server,rfc9207-iss,oidcc-userinfo-get,oidcc-userinfo-post-header,oidcc-refresh-token,rfc7662-introspection,rfc7009-revocation,oidcc-codereuse,oidcc-ensure-redirect-uri-in-authorization-request,oidcc-ensure-registered-redirect-uri,oidcc-prompt-none-not-logged-in,oidcc-id-token-hint,oidcc-prompt-login,oidcc-max-age-1,oidcc-rp-initiated-logout,oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported}"
PYTHON_CASES="${INTEROP_PYTHON_CASES:-oidcc-server,oidcc-userinfo-get,oidcc-userinfo-post-header,oidcc-userinfo-post-body,oidcc-refresh-token,rfc7662-introspection,rfc7009-revocation}"
# `openid` is not registered for the client: every client that signs users in may ask for it.
SCOPE="${INTEROP_SCOPE:-openid profile email payroll}"

SERVER="${CARGO_TARGET_DIR:-$ROOT/target}/debug/token-service"
TOKENCTL="${CARGO_TARGET_DIR:-$ROOT/target}/debug/tokenctl"
for binary in "$SERVER" "$TOKENCTL"; do
	[[ -x "$binary" ]] || {
		echo "interop: $binary is missing: run cargo build --workspace --bins" >&2
		exit 1
	}
done
NODE="$(infra/relying-parties.sh node)"
PYTHON="$(infra/relying-parties.sh python)"

# shellcheck source=infra/lib/local-server.sh
source "$ROOT/infra/lib/local-server.sh"
start_local_server "$PYTHON" interop

demo() { "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$DATA_DIR/demo.json" "$1"; }
field() { "$PYTHON" -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
tokenctl() { "$TOKENCTL" --store sqlite --data-dir "$DATA_DIR" "$@"; }
wants() { [[ ",$1," == *",$2,"* || ",$1," == *",all,"* ]]; }

# The relying party is registered as an operator would: tokenctl, with its own redirect URI (the
# browser stops there, so nothing needs to listen) and, for the logout case, a post-logout one.
export ISSUER="$BASE" SCOPE
export REDIRECT_URI="$BASE/rp/callback"
# `openid` is left out of the client's scopes: every client may ask for it unlisted.
API_SCOPES="$(tr ' ' '\n' <<<"$SCOPE" | { grep -vx -e openid -e offline_access || true; } | paste -sd' ' -)"
registration=(clients create --json --name "Interop RP" --scopes "$API_SCOPES"
	--grants authorization_code,refresh_token,client_credentials --redirect-uri "$REDIRECT_URI")
if wants "$NODE_CASES" oidcc-rp-initiated-logout; then
	export POST_LOGOUT_REDIRECT_URI="$BASE/rp/signed-out"
	registration+=(--post-logout-redirect-uri "$POST_LOGOUT_REDIRECT_URI")
fi
client="$(tokenctl "${registration[@]}")"
CLIENT_ID="$(field "$client" client_id)" CLIENT_SECRET="$(field "$client" client_secret)"
LOGIN="$(demo user_login)" PASSWORD="$(demo user_password)"
export CLIENT_ID CLIENT_SECRET LOGIN PASSWORD

status=0
echo "interop: openid-client (Node $("$NODE" --version)): $NODE_CASES" >&2
CASE="$NODE_CASES" "$NODE" tests/interop/node/rp.mjs || status=1
echo "interop: authlib (Python $("$PYTHON" -c 'import platform; print(platform.python_version())')): $PYTHON_CASES" >&2
CASE="$PYTHON_CASES" "$PYTHON" tests/interop/python/rp.py || status=1
# private_key_jwt: a client of its own, whose public key the driver writes for tokenctl first.
if wants "$PYTHON_CASES" private-key-jwt; then
	jwt_client="$(field "$(tokenctl clients create --json --name "Interop RP (private_key_jwt)" \
		--scopes "$API_SCOPES" --grants client_credentials)" client_id)"
	MODE=register JWKS_OUT="$DATA_DIR/rp-jwks.json" PRIVATE_KEY_FILE="$DATA_DIR/rp-key.json" \
		"$PYTHON" tests/interop/python/rp.py >/dev/null
	tokenctl clients set-jwks "$jwt_client" "$DATA_DIR/rp-jwks.json" >/dev/null
	CASE=private-key-jwt CLIENT_ID="$jwt_client" PRIVATE_KEY_FILE="$DATA_DIR/rp-key.json" \
		"$PYTHON" tests/interop/python/rp.py || status=1
fi
if ((status != 0)); then
	# What the server logged while serving, without the demo credentials of its banner.
	echo "interop: server log:" >&2
	sed -n '/^Token service listening/,$p' "$DATA_DIR/server.log" | tail -n 40 >&2
fi
exit "$status"
