#!/usr/bin/env bash
# Benchmarks, side by side: the local server (release build, SQLite, demo data, every token
# persisted) and node-oidc-provider 9 (in memory, opaque tokens) under the same `wrk` load, one
# after the other on the same machine, and the ratio per grant.
#
#   infra/bench.sh               # the side-by-side table (about a minute once built)
#   infra/bench.sh --per-grant   # then also the in-process harness: every grant on SQLite and
#                                # DynamoDB Local (tests/benches/token_endpoint.rs)
#
# Load: BENCH_THREADS (2) threads, BENCH_CONNECTIONS (32) connections, BENCH_DURATION (10s) per
# case. The server inherits the environment: `READ_CACHE_SECONDS=0 infra/bench.sh` measures it
# without its read cache (every request reads its client from SQLite). Installs `wrk` (apt-get)
# and node-oidc-provider (npm, into the ignored .cache/bench/) on first use. Not part of infra/test.sh: numbers from a shared 2-core machine are for comparing
# on the same machine, not for asserting.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

THREADS="${BENCH_THREADS:-2}"
CONNECTIONS="${BENCH_CONNECTIONS:-32}"
DURATION="${BENCH_DURATION:-10s}"
OIDC_PROVIDER_SPEC='oidc-provider@^9'
CACHE="$ROOT/.cache/bench"
RUN="$CACHE/run-$$"
PIDS=()

say() { echo "bench: $*" >&2; }
die() { say "$*"; exit 1; }

cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	rm -rf "$RUN"
}
trap cleanup EXIT

ensure_tools() {
	command -v node >/dev/null && command -v npm >/dev/null ||
		die "node and npm are needed for node-oidc-provider (Debian: apt-get install nodejs npm)"
	if ! command -v wrk >/dev/null; then
		say "installing wrk (apt-get)"
		local sudo=()
		[[ "$(id -u)" == 0 ]] || sudo=(sudo)
		"${sudo[@]}" apt-get install -y -qq wrk >/dev/null
	fi
	if [[ ! -f "$CACHE/node/node_modules/oidc-provider/package.json" ]]; then
		say "installing $OIDC_PROVIDER_SPEC into $CACHE/node"
		mkdir -p "$CACHE/node"
		npm install --prefix "$CACHE/node" --no-audit --no-fund --silent "$OIDC_PROVIDER_SPEC"
	fi
}

free_port() {
	node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'
}

# wait_until_up URL LOG: polls until URL answers at all (any status), or fails with the log.
wait_until_up() {
	for _ in $(seq 1 100); do
		curl -s -o /dev/null "$1" && return 0
		sleep 0.1
	done
	cat "$2" >&2
	die "nothing answers at $1"
}

# load URL AUTHORIZATION FORM: one wrk run; prints "req/s", with any failures after it.
load() {
	local out line
	# A failing first request means a broken setup, not a slow server: say so instead of timing it.
	local status
	status="$(curl -s -o "$RUN/probe" -w '%{http_code}' -H "Authorization: $2" --data "$3" "$1")"
	[[ "$status" == 200 ]] || die "POST $1 ($3) answered $status: $(cat "$RUN/probe")"
	out="$(BENCH_AUTHORIZATION="$2" BENCH_FORM="$3" \
		wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout 10s -s "$ROOT/infra/bench/token.lua" "$1")"
	line="$(grep '^BENCH_RESULT' <<<"$out")" || die "wrk printed no result: $out"
	local rps non_2xx socket_errors
	rps="$(sed -E 's/.*req_per_s=([0-9]+).*/\1/' <<<"$line")"
	non_2xx="$(sed -E 's/.*non_2xx=([0-9]+).*/\1/' <<<"$line")"
	socket_errors="$(sed -E 's/.*socket_errors=([0-9]+).*/\1/' <<<"$line")"
	local failures=()
	((non_2xx == 0)) || failures+=("$non_2xx non-2xx")
	((socket_errors == 0)) || failures+=("$socket_errors socket errors or timeouts")
	if ((${#failures[@]} > 0)); then
		echo "$rps ($(IFS=,; echo "${failures[*]}" | sed 's/,/, /g'))"
	else
		echo "$rps"
	fi
}

basic() { printf 'Basic %s' "$(printf '%s:%s' "$1" "$2" | base64 -w0)"; }
form() { node -e 'console.log(new URLSearchParams(JSON.parse(process.argv[1])).toString())' "$1"; }
json_field() { node -e 'console.log(require(process.argv[1])[process.argv[2]])' "$1" "$2"; }

ensure_tools
mkdir -p "$RUN"

# Builds the local server in either layout (the shared crate's binary, or a local-server crate).
say "building the local server (release)"
cargo build --release --bin token-service
SERVER="${CARGO_TARGET_DIR:-$ROOT/target}/release/token-service"

port="$(free_port)"
say "local server on 127.0.0.1:$port (SQLite, demo data in $RUN/data)"
DATA_DIR="$RUN/data" PORT="$port" "$SERVER" >"$RUN/server.log" 2>&1 &
PIDS+=($!)
wait_until_up "http://127.0.0.1:$port/v0/token/jwks" "$RUN/server.log"
demo="$RUN/data/demo.json"
client_id="$(json_field "$demo" client_id)"
client_secret="$(json_field "$demo" client_secret)"
ours_auth="$(basic "$client_id" "$client_secret")"
ours_url="http://127.0.0.1:$port/v0/token"
password_form="$(form "{\"grant_type\":\"password\",\"username\":\"$(json_field "$demo" user_login)\",\"password\":\"$(json_field "$demo" user_password)\"}")"

say "wrk: local server, client_credentials"
ours_cc="$(load "$ours_url" "$ours_auth" grant_type=client_credentials)"
say "wrk: local server, password"
ours_password="$(load "$ours_url" "$ours_auth" "$password_form")"
kill "${PIDS[-1]}"

port="$(free_port)"
peer_id="bench-client" peer_secret="bench-client-secret"
say "node-oidc-provider on 127.0.0.1:$port"
NODE_ENV=production PORT="$port" BENCH_CLIENT_ID="$peer_id" BENCH_CLIENT_SECRET="$peer_secret" \
	BENCH_OIDC_PROVIDER="$CACHE/node/node_modules/oidc-provider/lib/index.js" \
	node infra/bench/provider.mjs >"$RUN/provider.log" 2>&1 &
PIDS+=($!)
wait_until_up "http://127.0.0.1:$port/.well-known/openid-configuration" "$RUN/provider.log"
say "wrk: node-oidc-provider, client_credentials"
peer_cc="$(load "http://127.0.0.1:$port/token" "$(basic "$peer_id" "$peer_secret")" grant_type=client_credentials)"
kill "${PIDS[-1]}"

ratio() { awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN { printf "%.2f×", a / b }'; }
echo
echo "wrk -t$THREADS -c$CONNECTIONS -d$DURATION, $(nproc) cores shared by wrk and the server"
echo
echo "| grant | token-service req/s | node-oidc-provider $(json_field "$CACHE/node/node_modules/oidc-provider/package.json" version) req/s | ratio |"
echo "|---|---|---|---|"
echo "| client_credentials | $ours_cc | $peer_cc | $(ratio "$ours_cc" "$peer_cc") |"
echo "| password | $ours_password | n/a (no password grant) | |"
echo "| refresh_token | n/a (one token per request; a replayed token is reuse) | n/a (needs an interactive code flow) | |"

if [[ "${1:-}" == "--per-grant" ]]; then
	echo
	if [[ -z "${DYNAMODB_ENDPOINT:-}" ]]; then
		export DYNAMODB_LOCAL_PID_FILE="$ROOT/.cache/dynamodb-local/run/bench.pid"
		trap 'infra/dynamodb-local.sh stop >/dev/null 2>&1 || true; cleanup' EXIT
		DYNAMODB_ENDPOINT="$(infra/dynamodb-local.sh start)"
		export DYNAMODB_ENDPOINT
	fi
	export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}" AWS_REGION="${AWS_REGION:-us-east-1}"
	cargo bench -p integration-tests --bench token_endpoint
fi
