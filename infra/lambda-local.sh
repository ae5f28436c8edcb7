#!/usr/bin/env bash
# Runs the three Lambda functions locally under `cargo lambda watch` (cargo-lambda's emulator of
# the Lambda runtime and function URLs) over DynamoDB Local, and sends one request through each:
#
#   token              POST /v0/token client_credentials                -> 200, an access_token
#   exchange           the exchange of an imported old refresh token     -> 200, "code": "OK"
#   company-authtoken  an administrator's user token (password grant at
#                      the token function), then the company auth token  -> 200, "status": "PASS"
#
# Prints PASS or FAIL per function and exits non-zero if any failed. Everything it starts
# (DynamoDB Local, the emulators, the function processes) is stopped on exit, whatever happens.
#
# Usage: infra/lambda-local.sh
#
# Environment:
#   DYNAMODB_ENDPOINT    a running DynamoDB Local on a loopback address (infra/test.sh exports
#                        one) to use with a fresh table, which is deleted at the end; unset:
#                        start one with infra/dynamodb-local.sh and stop it at the end
#   LAMBDA_LOCAL_KEEP=1  keep the run directory (emulator logs, DATA_DIR) after a success too;
#                        after a failure it is always kept, and its path printed
#
# How: tokenctl (built from this workspace) creates the table, a signing key in a DATA_DIR of
# its own, an app, a company with an administrator, a linked consumer key and one old token.
# Then one `cargo lambda watch -p <function>` per function on a free loopback port: the
# workspace's default member is the shared crate (for `cargo run`), so `cargo run --bin token`,
# which a single watch would run, finds no function binary; each watch therefore runs one
# package. All three get the same environment (STORE=dynamodb, DYNAMODB_ENDPOINT, TABLE_NAME,
# GEOLOCATION, DATA_DIR): tokens minted by one verify at the others. Requests go to
# http://127.0.0.1:<port>/lambda-url/<function>/<path>, the emulator's function URL, which hands
# the function an HTTP event as AWS would.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=infra/lib/cargo-lambda.sh
source "$ROOT/infra/lib/cargo-lambda.sh"

FUNCTIONS=(token exchange company-authtoken)
# Seconds an emulator has to listen on its port after it was started.
READY_TIMEOUT_SECONDS=60
# Seconds for one request (the first one to a function includes its `cargo run` start, which
# only checks the build done beforehand).
REQUEST_TIMEOUT_SECONDS=120
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

started_at=$SECONDS
log() { echo "lambda-local: [$((SECONDS - started_at))s] $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# --- Cleanup ------------------------------------------------------------------------------------
RUN_DIR=""
DDB_RUN_DIR=""    # set when this script started its own DynamoDB Local
TABLE_CREATED=""  # set once the table exists in a DynamoDB Local this script did not start
WATCH_PIDS=()
DRIVER_PID=""     # the Python process sending the requests, while it runs

# Pids and command names of every descendant of process $1 (the function instances of a watch
# run in sessions of their own, so they are not in its process group).
descendants() {
	ps -e -o pid=,ppid=,comm= | awk -v root="$1" '
		{ parent[$1] = $2; name[$1] = $3 }
		END {
			for (pid in parent) {
				p = parent[pid]
				while (p != "" && p != 0 && p != 1 && p != root) p = parent[p]
				if (p == root) print pid, name[pid]
			}
		}'
}

stop_watches() {
	local pid children=() line deadline
	for pid in "${WATCH_PIDS[@]}"; do
		while read -r line; do
			[[ -n "$line" ]] && children+=("$line")
		done < <(descendants "$pid")
		kill -TERM "$pid" 2>/dev/null || true
	done
	# cargo-lambda stops its function instances itself on SIGTERM; give it a few seconds.
	deadline=$((SECONDS + 10))
	for pid in "${WATCH_PIDS[@]}"; do
		while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	# Whatever survived it: only processes recorded above, still running the same program.
	for line in "${children[@]}"; do
		pid="${line%% *}"
		if [[ "$(ps -o comm= -p "$pid" 2>/dev/null || true)" == "${line#* }" ]]; then
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	WATCH_PIDS=()
}

cleanup() {
	local status=$?
	set +e
	if [[ -n "$DRIVER_PID" ]]; then
		kill -TERM "$DRIVER_PID" 2>/dev/null
		wait "$DRIVER_PID" 2>/dev/null
	fi
	((${#WATCH_PIDS[@]})) && stop_watches
	if [[ -n "$TABLE_CREATED" ]]; then
		delete_table || log "could not delete table $TABLE_NAME from $DYNAMODB_ENDPOINT"
	fi
	if [[ -n "$DDB_RUN_DIR" ]]; then
		DYNAMODB_LOCAL_PID_FILE="$DDB_RUN_DIR/dynamodb-local.pid" infra/dynamodb-local.sh stop
		rm -rf "$DDB_RUN_DIR"
	fi
	if [[ -n "$RUN_DIR" ]]; then
		if ((status == 0)) && [[ "${LAMBDA_LOCAL_KEEP:-0}" != 1 ]]; then
			rm -rf "$RUN_DIR"
		else
			log "logs and DATA_DIR kept in ${RUN_DIR#"$ROOT"/}"
		fi
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- Helpers ------------------------------------------------------------------------------------
# json_field FILE KEY: one string field of the JSON object in FILE.
json_field() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# free_ports N: N distinct free loopback ports, one a line.
free_ports() {
	python3 - "$1" <<'PY'
import socket
import sys

sockets = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
for s in sockets:
    print(s.getsockname()[1])
PY
}

port_open() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# DynamoDB Local checks that requests are signed but not the signature: a DeleteTable with a
# placeholder one removes the table this run created in an instance it did not start.
delete_table() {
	python3 - "$DYNAMODB_ENDPOINT" "$TABLE_NAME" <<'PY'
import json
import sys
import urllib.request

endpoint, table = sys.argv[1], sys.argv[2]
request = urllib.request.Request(
    endpoint,
    data=json.dumps({"TableName": table}).encode(),
    headers={
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.DeleteTable",
        "Authorization": "AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=host, Signature=0",
    },
    method="POST",
)
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
with opener.open(request, timeout=10) as response:
    response.read()
PY
}

# --- Prerequisites and builds ------------------------------------------------------------------
for tool in cargo python3 ps awk; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (see infra/test.sh, step prerequisites)"
done

if [[ -n "${DYNAMODB_ENDPOINT:-}" ]]; then
	[[ "$DYNAMODB_ENDPOINT" =~ ^http://(127\.[0-9]+\.[0-9]+\.[0-9]+|localhost|\[::1\]):[0-9]+/?$ ]] ||
		die "DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT is not a loopback http://HOST:PORT; this script only uses DynamoDB Local"
fi

ensure_cargo_lambda "$ROOT" lambda-local
log "$(cargo lambda --version)"

# The emulators run `cargo run -p <function> --bin <function>`; building the same packages first
# makes those runs instant and puts any compilation here, with its output, rather than inside
# the first request.
log "cargo build -p token-service --bin tokenctl"
cargo build --quiet -p token-service --bin tokenctl
packages=()
for name in "${FUNCTIONS[@]}"; do packages+=(-p "$name"); done
log "cargo build ${packages[*]}"
cargo build --quiet "${packages[@]}"
TOKENCTL="$TARGET_DIR/debug/tokenctl"
[[ -x "$TOKENCTL" ]] || die "$TOKENCTL was not built"

umask 077
mkdir -p .cache/lambda-local
RUN_DIR="$(mktemp -d "$ROOT/.cache/lambda-local/run.XXXXXX")"
mkdir -p "$RUN_DIR/data"

# --- DynamoDB Local -----------------------------------------------------------------------------
# DynamoDB Local accepts any credentials, but the SDK wants some; never real ones here.
export AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_REGION="${AWS_REGION:-us-east-1}"
unset AWS_SESSION_TOKEN AWS_PROFILE SIGNING_KEYS_SECRET_ARN

if [[ -z "${DYNAMODB_ENDPOINT:-}" ]]; then
	mkdir -p .cache/dynamodb-local/run
	DDB_RUN_DIR="$(mktemp -d "$ROOT/.cache/dynamodb-local/run/lambda-local.XXXXXX")"
	DYNAMODB_ENDPOINT="$(DYNAMODB_LOCAL_PID_FILE="$DDB_RUN_DIR/dynamodb-local.pid" infra/dynamodb-local.sh start)"
	log "started DynamoDB Local at $DYNAMODB_ENDPOINT"
else
	log "using DynamoDB Local at $DYNAMODB_ENDPOINT"
fi

# --- Data ---------------------------------------------------------------------------------------
ports=()
while read -r port; do ports+=("$port"); done < <(free_ports "${#FUNCTIONS[@]}")

suffix="$(python3 -c 'import secrets; print(secrets.token_hex(4))')"
export STORE=dynamodb DYNAMODB_ENDPOINT
export TABLE_NAME="lambda-local-$suffix"
export DATA_DIR="$RUN_DIR/data"
# Every function (and tokenctl, for the users' home) has the same geolocation, as the three
# functions of one regional deployment do.
export GEOLOCATION="http://127.0.0.1:${ports[0]}"

log "tokenctl: table $TABLE_NAME, signing key, app, company, administrator, legacy token"
"$TOKENCTL" table create >/dev/null
[[ -n "$DDB_RUN_DIR" ]] || TABLE_CREATED=1
# One key ring for the three functions, written before any of them starts.
"$TOKENCTL" keys rotate >/dev/null
"$TOKENCTL" --json clients create --name "lambda-local app" --scopes "read write" \
	--connect-url "https://app.example.com/connect" >"$RUN_DIR/client.json"
"$TOKENCTL" --json companies create --name "lambda-local company" >"$RUN_DIR/company.json"
CLIENT_ID="$(json_field "$RUN_DIR/client.json" client_id)"
CLIENT_SECRET="$(json_field "$RUN_DIR/client.json" client_secret)"
COMPANY_ID="$(json_field "$RUN_DIR/company.json" company_id)"
"$TOKENCTL" companies enable-client "$COMPANY_ID" "$CLIENT_ID" >/dev/null
ADMIN_LOGIN="admin-$suffix@lambda-local.example"
ADMIN_PASSWORD="$(python3 -c 'import secrets; print(secrets.token_urlsafe(18))')"
printf '%s\n' "$ADMIN_PASSWORD" |
	"$TOKENCTL" --json users create --login "$ADMIN_LOGIN" --password-stdin \
		--company "$COMPANY_ID" --admin >"$RUN_DIR/admin.json"
ADMIN_USER_ID="$(json_field "$RUN_DIR/admin.json" user_id)"
CONSUMER_KEY="lambda-local-$suffix"
LEGACY_TOKEN="legacy-$(python3 -c 'import secrets; print(secrets.token_hex(16))')"
"$TOKENCTL" legacy-apps link "$CONSUMER_KEY" "$CLIENT_ID" >/dev/null
python3 - "$LEGACY_TOKEN" "$CONSUMER_KEY" "$ADMIN_USER_ID" >"$RUN_DIR/legacy-tokens.jsonl" <<'PY'
import json
import sys

token, consumer_key, user_id = sys.argv[1:]
print(json.dumps({"token": token, "consumer_key": consumer_key, "principal_type": "user",
                  "principal_id": user_id, "scopes": ["read"], "wsadmin": False}))
PY
"$TOKENCTL" --json legacy-tokens import "$RUN_DIR/legacy-tokens.jsonl" >"$RUN_DIR/import.json"
[[ "$(json_field "$RUN_DIR/import.json" imported)" == 1 ]] ||
	die "legacy-tokens import did not import the token: $(cat "$RUN_DIR/import.json")"

# --- The emulators ------------------------------------------------------------------------------
# The functions' environment, as template.yaml gives it in AWS (minus the Secrets Manager ARN:
# without it they load DATA_DIR/signing-keys.json).
cat >"$RUN_DIR/functions.env" <<EOF
STORE=dynamodb
DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT
TABLE_NAME=$TABLE_NAME
GEOLOCATION=$GEOLOCATION
DATA_DIR=$DATA_DIR
AWS_REGION=$AWS_REGION
AWS_ACCESS_KEY_ID=local
AWS_SECRET_ACCESS_KEY=local
RUST_LOG=${RUST_LOG:-info}
EOF

declare -A URL
for i in "${!FUNCTIONS[@]}"; do
	name="${FUNCTIONS[$i]}"
	port="${ports[$i]}"
	log "cargo lambda watch -p $name on 127.0.0.1:$port (log: ${RUN_DIR#"$ROOT"/}/watch-$name.log)"
	# --ignore-changes: others edit this tree; a reload in the middle of the run is not wanted.
	"$ROOT/.cache/venv/bin/cargo-lambda" lambda watch --ignore-changes \
		--invoke-address 127.0.0.1 --invoke-port "$port" \
		--package "$name" --env-file "$RUN_DIR/functions.env" \
		>"$RUN_DIR/watch-$name.log" 2>&1 </dev/null &
	WATCH_PIDS+=("$!")
	URL[$name]="http://127.0.0.1:$port/lambda-url/$name"
done

deadline=$((SECONDS + READY_TIMEOUT_SECONDS))
for i in "${!FUNCTIONS[@]}"; do
	name="${FUNCTIONS[$i]}"
	until port_open "${ports[$i]}"; do
		if ! kill -0 "${WATCH_PIDS[$i]}" 2>/dev/null; then
			tail -n 20 "$RUN_DIR/watch-$name.log" >&2
			die "cargo lambda watch for $name exited at start"
		fi
		((SECONDS < deadline)) || die "cargo lambda watch for $name did not listen within ${READY_TIMEOUT_SECONDS}s"
		sleep 0.2
	done
done
log "emulators listening"

# --- The requests -------------------------------------------------------------------------------
export TOKEN_URL="${URL[token]}" EXCHANGE_URL="${URL[exchange]}" COMPANY_URL="${URL[company-authtoken]}"
export CLIENT_ID CLIENT_SECRET COMPANY_ID ADMIN_LOGIN ADMIN_PASSWORD ADMIN_USER_ID CONSUMER_KEY LEGACY_TOKEN
export REQUEST_TIMEOUT_SECONDS
# In the background with `wait`, so that an INT or TERM is handled at once (bash runs traps only
# between foreground commands); cleanup stops the driver too.
python3 - <<'PY' &
import base64
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

env = os.environ
TIMEOUT = int(env["REQUEST_TIMEOUT_SECONDS"])


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


# No proxy (loopback only) and no redirects followed.
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())


def call(method, url, form=None, headers=None):
    """(status, parsed JSON body or None, raw body) of one request."""
    assert url.startswith("http://127.0.0.1:"), url
    data = urllib.parse.urlencode(form).encode() if form is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        request.add_header("Content-Type", "application/x-www-form-urlencoded")
    try:
        with opener.open(request, timeout=TIMEOUT) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read()
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    return status, body, raw


def basic(client_id, secret):
    return "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()


class Failed(Exception):
    pass


def shown(body, raw):
    """The response for a failure message, with credentials cut short."""
    if not isinstance(body, dict):
        return raw[:300].decode(errors="replace")
    return json.dumps({key: (value[:8] + "..." if "token" in key.lower() and isinstance(value, str)
                             and len(value) > 8 else value)
                       for key, value in body.items()})


def expect(condition, what, status, body, raw):
    if not condition:
        raise Failed(f"{what}; got HTTP {status}: {shown(body, raw)}")


def is_jwt(value):
    return isinstance(value, str) and value.count(".") == 2 and all(value.split("."))


results = {}


def check(name, function):
    started = time.monotonic()
    try:
        detail = function()
        results[name] = True
        print(f"PASS {name}: {detail} ({time.monotonic() - started:.1f}s)", flush=True)
    except Failed as failure:
        results[name] = False
        print(f"FAIL {name}: {failure}", flush=True)
    except (OSError, urllib.error.URLError) as error:
        results[name] = False
        print(f"FAIL {name}: no answer: {error}", flush=True)


state = {}


def token_function():
    # The first request starts the function (cargo run, then the Lambda runtime's first poll).
    status, body, raw = call(
        "POST", env["TOKEN_URL"] + "/v0/token",
        form={"grant_type": "client_credentials"},
        headers={"Authorization": basic(env["CLIENT_ID"], env["CLIENT_SECRET"])},
    )
    expect(status == 200, "client_credentials: expected HTTP 200", status, body, raw)
    expect(isinstance(body, dict) and is_jwt(body.get("access_token")),
           "client_credentials: expected a JWT access_token", status, body, raw)
    expect(body.get("token_type") == "Bearer" and body.get("principal_type") == "application"
           and body.get("id") == env["CLIENT_ID"] and "refresh_token" not in body,
           "client_credentials: expected an application token of the app, without refresh token",
           status, body, raw)
    state["app_token"] = body["access_token"]
    return f"POST /v0/token client_credentials -> 200, application token, scope {body.get('scope')!r}"


def exchange_function():
    if "app_token" not in state:
        raise Failed("skipped: no application token from the token function")
    url = (env["EXCHANGE_URL"] + "/appmgmt/v0/legacyApps/"
           + urllib.parse.quote(env["CONSUMER_KEY"], safe="") + "/exchangeRefreshToken/me")
    status, body, raw = call(
        "POST", url,
        form={"token": env["LEGACY_TOKEN"], "secret": env["CLIENT_SECRET"]},
        headers={"Authorization": "Bearer " + state["app_token"]},
    )
    expect(status == 200, "exchange: expected HTTP 200", status, body, raw)
    expect(isinstance(body, dict) and body.get("code") == "OK", 'exchange: expected "code": "OK"',
           status, body, raw)
    expect(is_jwt(body.get("accessToken")) and body.get("refreshToken")
           and body.get("principalType") == "user" and body.get("id") == env["ADMIN_USER_ID"],
           "exchange: expected a user family for the old token's principal", status, body, raw)
    return "POST /appmgmt/v0/legacyApps/{key}/exchangeRefreshToken/me -> 200, code OK, user family"


def company_function():
    status, body, raw = call(
        "POST", env["TOKEN_URL"] + "/v0/token",
        form={"grant_type": "password", "username": env["ADMIN_LOGIN"],
              "password": env["ADMIN_PASSWORD"]},
        headers={"Authorization": basic(env["CLIENT_ID"], env["CLIENT_SECRET"])},
    )
    expect(status == 200 and isinstance(body, dict) and is_jwt(body.get("access_token"))
           and body.get("principal_type") == "user" and body.get("id") == env["ADMIN_USER_ID"],
           "password grant for the administrator (token function): expected HTTP 200 with a user token",
           status, body, raw)
    url = env["COMPANY_URL"] + "/profile-service/v1/keys/principals/" + env["COMPANY_ID"] + "/authtoken/"
    status, body, raw = call(
        "POST", url,
        form={"client_id": env["CLIENT_ID"]},
        headers={"Authorization": "Bearer " + body["access_token"]},
    )
    expect(status == 200, "company auth token: expected HTTP 200", status, body, raw)
    expect(isinstance(body, dict) and body.get("status") == "PASS" and body.get("code") == 0
           and isinstance(body.get("token"), str) and body["token"],
           'company auth token: expected "status": "PASS", "code": 0 and a token', status, body, raw)
    return ("password grant -> 200 user token; POST /profile-service/v1/keys/principals/{company}"
            "/authtoken/ -> 200, status PASS")


check("token", token_function)
check("exchange", exchange_function)
check("company-authtoken", company_function)
failed = [name for name, ok in results.items() if not ok]
sys.exit(1 if failed else 0)
PY
DRIVER_PID=$!
status=0
wait "$DRIVER_PID" || status=$?
DRIVER_PID=""

if ((status != 0)); then
	for name in "${FUNCTIONS[@]}"; do
		echo "--- last lines of ${RUN_DIR#"$ROOT"/}/watch-$name.log" >&2
		tail -n 15 "$RUN_DIR/watch-$name.log" >&2 || true
	done
	log "FAILED"
	exit 1
fi
log "all ${#FUNCTIONS[@]} functions answered as expected under cargo lambda watch"
