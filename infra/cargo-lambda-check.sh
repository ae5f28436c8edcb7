#!/usr/bin/env bash
# The Lambda functions under `cargo lambda watch`, the way the README tells a developer to try
# one locally, over a table of their own on DynamoDB Local, configured as template.yaml
# configures them in AWS. Then, with answers checked (status and body fields):
#
#   cargo lambda invoke --data-file    API Gateway HTTP API events from tests/fixtures/apigw/:
#                                      client_credentials at token (a base64 form body), the
#                                      old-token exchange at exchange, and the company auth token
#                                      (?redirect=true: 301 to the Connect URL) at
#                                      company-authtoken;
#   watch's HTTP emulation             http://127.0.0.1:PORT/lambda-url/<function>/<path>: the
#                                      administrator's password grant and the JWK Set at token,
#                                      the company auth token (200, PASS) at company-authtoken.
#
# watch runs with --only-lambda-apis, and the script starts the debug binaries the test command
# has just built (target/debug/<function>) against watch's Runtime API (AWS_LAMBDA_RUNTIME_API
# = http://127.0.0.1:PORT/.rt/<function>), as watch itself would after a `cargo run -p
# <function>`: that build resolves each package's features alone, and set about compiling part
# of the dependency tree and the workspace's crates again for the same code.
#
# The data (an app, a company with its administrator, an imported old token) is made with the
# built tokenctl, as an operator would. Fails loudly at the first wrong answer; never skips.
#
# Needs DYNAMODB_ENDPOINT (infra/test.sh exports it) and the debug build of the workspace's
# binaries (`cargo build --workspace --all-targets`, infra/test.sh's build step). cargo-lambda is
# installed into .cache/venv on first use (infra/lib/cargo-lambda.sh).
#
# Usage: infra/cargo-lambda-check.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# shellcheck source=infra/lib/venv.sh
source "$ROOT/infra/lib/venv.sh"
# shellcheck source=infra/lib/cargo-lambda.sh
source "$ROOT/infra/lib/cargo-lambda.sh"

TAG=cargo-lambda-check
die() {
	echo "$TAG: $*" >&2
	exit 1
}
say() { echo "$TAG: $*" >&2; }

[[ -n "${DYNAMODB_ENDPOINT:-}" ]] ||
	die "DYNAMODB_ENDPOINT is not set: export DYNAMODB_ENDPOINT=\$(infra/dynamodb-local.sh start)"
BIN="$ROOT/target/debug"
FUNCTIONS=(token exchange company-authtoken)
TOKENCTL="$BIN/tokenctl"
for binary in tokenctl "${FUNCTIONS[@]}"; do
	[[ -x "$BIN/$binary" ]] || die "$BIN/$binary is missing: cargo build --workspace --all-targets first"
done
command -v jq >/dev/null || die "jq not found: apt-get install jq"
command -v curl >/dev/null || die "curl not found: apt-get install curl"

ensure_cargo_lambda "$ROOT" "$TAG"
say "$(cargo lambda --version)"

export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

TABLE="cargo-lambda-$$-$(date +%s)"
GEOLOCATION="https://cargo-lambda.test.example"
CONNECT_URL="https://app.example.com/connect"
ADMIN_LOGIN="admin@cargo-lambda.example"
ADMIN_PASSWORD="the administrator's password $RANDOM$RANDOM"
CONSUMER_KEY="cargo-lambda-app"
OLD_TOKEN="legacy-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
mkdir -p "$WORK/data"

# What the functions and the tool share: template.yaml's variables for a local deployment (the
# key ring's secret in DATA_DIR instead of Secrets Manager, the table on DynamoDB Local).
cat >"$WORK/function.env" <<EOF
STORE=dynamodb
DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT
TABLE_NAME=$TABLE
DATA_DIR=$WORK/data
GEOLOCATION=$GEOLOCATION
AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID
AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY
AWS_REGION=$AWS_REGION
AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH=true
RUST_LOG=info
EOF

tokenctl() {
	env STORE=dynamodb DYNAMODB_ENDPOINT="$DYNAMODB_ENDPOINT" TABLE_NAME="$TABLE" \
		DATA_DIR="$WORK/data" GEOLOCATION="$GEOLOCATION" RUST_LOG=warn "$TOKENCTL" --json "$@"
}

# --- The deployment's data ---------------------------------------------------------------------
tokenctl table create >/dev/null
tokenctl keys rotate >/dev/null
app="$(tokenctl clients create --name "cargo lambda app" --scopes "read write" \
	--grants client_credentials,refresh_token,password --first-party --connect-url "$CONNECT_URL")"
CLIENT_ID="$(jq -r .client_id <<<"$app")"
CLIENT_SECRET="$(jq -r .client_secret <<<"$app")"
COMPANY_ID="$(tokenctl companies create --name "Cargo Lambda Co" | jq -r .company_id)"
tokenctl companies enable-client "$COMPANY_ID" "$CLIENT_ID" >/dev/null
ADMIN_ID="$(printf '%s\n' "$ADMIN_PASSWORD" | tokenctl users create --login "$ADMIN_LOGIN" \
	--password-stdin --company "$COMPANY_ID" --admin | jq -r .user_id)"
tokenctl legacy-apps link "$CONSUMER_KEY" "$CLIENT_ID" >/dev/null
jq -nc --arg token "$OLD_TOKEN" --arg key "$CONSUMER_KEY" --arg admin "$ADMIN_ID" \
	'{token: $token, consumer_key: $key, principal_type: "user", principal_id: $admin,
	  scopes: ["read"], wsadmin: false}' >"$WORK/legacy.jsonl"
tokenctl legacy-tokens import "$WORK/legacy.jsonl" | jq -e '.imported == 1' >/dev/null ||
	die "the old token was not imported"

# --- cargo lambda watch -------------------------------------------------------------------------
PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
say "cargo lambda watch --only-lambda-apis on 127.0.0.1:$PORT (table $TABLE)"
cargo lambda watch --only-lambda-apis --invoke-address 127.0.0.1 --invoke-port "$PORT" \
	>"$WORK/watch.log" 2>&1 &
PIDS+=("$!")
listening() { python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$PORT" 2>/dev/null; }
for _ in $(seq 1 300); do
	listening && break
	kill -0 "${PIDS[0]}" 2>/dev/null || { cat "$WORK/watch.log" >&2; die "cargo lambda watch exited"; }
	sleep 0.1
done
listening || { cat "$WORK/watch.log" >&2; die "cargo lambda watch did not listen on $PORT"; }

# Each function with the variables Lambda sets and the template's (function.env).
for function in "${FUNCTIONS[@]}"; do
	(
		set -a
		# shellcheck source=/dev/null
		source "$WORK/function.env"
		set +a
		export AWS_LAMBDA_RUNTIME_API="http://127.0.0.1:$PORT/.rt/$function" \
			AWS_LAMBDA_FUNCTION_NAME="$function" AWS_LAMBDA_FUNCTION_VERSION=1 \
			AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256
		exec "$BIN/$function"
	) >"$WORK/$function.log" 2>&1 &
	PIDS+=("$!")
done

# A fixture with its {{PLACEHOLDERS}} filled in, written to a file: fill FIXTURE KEY VALUE...
fill() {
	local fixture="$1" out
	shift
	out="$WORK/$(basename "$fixture")"
	python3 - "tests/fixtures/apigw/$fixture" "$out" "$@" <<'PY'
import sys
source, target, pairs = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(source).read()
for key, value in zip(pairs[::2], pairs[1::2]):
    text = text.replace("{{" + key + "}}", value)
if "{{" in text:
    sys.exit(f"unfilled placeholder in {source}")
open(target, "w").write(text)
PY
	echo "$out"
}

# `cargo lambda invoke FUNCTION --data-file FILE`: API Gateway's response object, its body
# decoded and parsed as `.json` (null when it is not JSON).
invoke() {
	local answer
	answer="$(timeout 120 cargo lambda invoke "$1" --invoke-address 127.0.0.1 \
		--invoke-port "$PORT" --data-file "$2" --output-format json)" || {
		tail -n 40 "$WORK/watch.log" "$WORK/$1.log" >&2
		die "cargo lambda invoke $1 failed"
	}
	jq -c '. + {json: ((if .isBase64Encoded then (.body | @base64d) else .body end)
		| (try fromjson catch null))}' <<<"$answer"
}

# expect WHAT JQ-FILTER JSON: the filter must hold, or the run stops with the answer.
expect() {
	jq -e "$2" <<<"$3" >/dev/null || {
		tail -n 20 "$WORK"/*.log >&2
		die "$1: expected $2, got $3"
	}
}

JWT='test("^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$")'

# token, invoked: client_credentials with the client's credentials in a base64 form body.
body="$(printf 'grant_type=client_credentials&client_id=%s&client_secret=%s' "$CLIENT_ID" "$CLIENT_SECRET" | base64 -w0)"
started=$SECONDS
answer="$(invoke token "$(fill token_client_credentials_base64_form.json BODY_BASE64 "$body")")"
say "token: first invocation answered in $((SECONDS - started)) s"
expect "token (invoke)" ".statusCode == 200 and (.json.access_token | $JWT) and .json.principal_type == \"application\" and .json.id == \"$CLIENT_ID\"" "$answer"
APP_TOKEN="$(jq -r .json.access_token <<<"$answer")"

# token, over HTTP: the administrator's password grant, and the JWK Set.
URL="http://127.0.0.1:$PORT/lambda-url"
answer="$(curl -sS -w '\n%{http_code}' -u "$CLIENT_ID:$CLIENT_SECRET" "$URL/token/v0/token" \
	--data-urlencode grant_type=password --data-urlencode "username=$ADMIN_LOGIN" \
	--data-urlencode "password=$ADMIN_PASSWORD")"
expect "token (HTTP, password)" "(.access_token | $JWT) and .principal_type == \"user\" and .id == \"$ADMIN_ID\"" "$(head -n1 <<<"$answer")"
[[ "$(tail -n1 <<<"$answer")" == 200 ]] || die "token (HTTP, password): status $(tail -n1 <<<"$answer")"
ADMIN_TOKEN="$(head -n1 <<<"$answer" | jq -r .access_token)"
jwks="$(curl -sS -f "$URL/token/oauth2/v0/jwks")" || die "token (HTTP): GET /oauth2/v0/jwks failed"
expect "token (HTTP, jwks)" '(.keys | length) >= 1 and all(.keys[]; .kty == "EC" and .alg == "ES256" and (has("d") | not))' "$jwks"

# exchange, invoked: the imported old token becomes a family of the administrator's.
answer="$(invoke exchange "$(fill exchange_form.json CONSUMER_KEY "$CONSUMER_KEY" APP_TOKEN "$APP_TOKEN" \
	OLD_TOKEN "$OLD_TOKEN" CLIENT_SECRET "$CLIENT_SECRET")")"
expect "exchange (invoke)" ".statusCode == 200 and .json.code == \"OK\" and (.json.accessToken | $JWT) and .json.principalType == \"user\" and .json.id == \"$ADMIN_ID\"" "$answer"

# company-authtoken, invoked: ?redirect=true answers 301 to the Connect URL with the auth token.
answer="$(invoke company-authtoken "$(fill company_authtoken_redirect.json COMPANY_ID "$COMPANY_ID" \
	CLIENT_ID "$CLIENT_ID" ADMIN_TOKEN "$ADMIN_TOKEN")")"
expect "company-authtoken (invoke)" ".statusCode == 301 and (.headers.location | startswith(\"$CONNECT_URL?\") and contains(\"id=$COMPANY_ID\") and test(\"requestToken=[^&]+\") and contains(\"userID=$ADMIN_ID\"))" "$answer"

# company-authtoken, over HTTP: the auth token in the body.
answer="$(curl -sS -X POST -H "Authorization: Bearer $ADMIN_TOKEN" \
	"$URL/company-authtoken/profile-service/v1/keys/principals/$COMPANY_ID/authtoken/?client_id=$CLIENT_ID")"
expect "company-authtoken (HTTP)" '.status == "PASS" and .code == 0 and (.token | length) > 0' "$answer"

say "token, exchange and company-authtoken answered under cargo lambda watch (invoke and HTTP) in $SECONDS s"
