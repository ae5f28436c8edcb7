#!/usr/bin/env bash
# Benchmarks, in one run, then one summary (results and history: docs/benchmarks.md):
#
# 1. Side by side: the local server (release build, SQLite, demo data, every token persisted) and
#    node-oidc-provider 9 (in memory, opaque tokens) under the same `wrk` load, taking turns on
#    the same machine for BENCH_ROUNDS rounds, and the ratio of the medians. In the same rounds:
#    the floor server (tests/bin/floor_server.rs: HTTP plus one ES256 signature, no store) and
#    the local server again with METRICS=off, so the metrics' cost is read from one run.
# 2. DynamoDB calls per request: the round-trip budget tests (tests/integration/round_trips.rs)
#    count each flow's calls at the wire, through a proxy in front of DynamoDB Local, on a warm
#    instance; they fail when a flow exceeds its budget. This script runs them with `--nocapture`
#    and tabulates the counts they print.
# 3. Cold starts: the three Lambda functions and the hello-world `lambda_http` baseline
#    (tests/hello-lambda/, whose request reads one DynamoDB item), built with `cargo build
#    --release` as deployed (no SQLite linked), are
#    timed by the lambda_runtime test (tests/integration/lambda_runtime.rs): each binary runs
#    under an in-test Lambda Runtime API over DynamoDB Local, and the test prints its init (process
#    start to its first poll for an event) and its first request's latency. The test harness
#    itself stays a debug build; `LAMBDA_BINARIES_DIR` points it at target/release. Run
#    BENCH_COLD_STARTS (20) times: a single init is a few milliseconds, and another process's
#    time slice moves it by as much, so the summary gives each binary's minimum and median and
#    the median's ratio to hello-lambda's (the goal: at most 1.5x), and the median of init plus
#    first response per run with its ratio (the goal: at most 2x). The same test runs
#    the key rotation function and prints the token function's init with and without a stored
#    key ring (its read timed by the function itself); the summary gives those lines too.
# 4. Signing cost: one access token's signature with the local key beside one `kms:Sign`
#    (tests/benches/signing_cost.rs) against the local KMS emulator at KMS_ENDPOINT, else its
#    own instance (infra/kms-local.sh, stopped at exit).
# 5. Latency percentiles at a fixed rate: infra/bench-latency.sh (client_credentials, with
#    METRICS=off and with DPoP beside it, refresh_token and authorization_code, each at half its
#    own maximum, with latency from each request's due time); its tables go in the summary.
# 6. Cost model: infra/cost-model.py on this run's round-trip counts and units and its throughput
#    (CPU per request = cores / req/s, an upper bound since wrk shares the cores), and the same
#    workload at Amazon Cognito's and Auth0's published prices.
#
#   infra/bench.sh               # all of the above (a few minutes once built)
#   infra/bench.sh --per-grant   # also the in-process harness: every grant on SQLite and
#                                # DynamoDB Local (tests/benches/token_endpoint.rs)
#
# Load: BENCH_THREADS (2) threads, BENCH_CONNECTIONS (32) connections, BENCH_DURATION (10s) per
# case; BENCH_ROUNDS (5) alternating rounds of the side by side. The server inherits the
# environment: `READ_CACHE_SECONDS=0 infra/bench.sh` measures it without its read cache (every
# request reads its client from SQLite). DynamoDB Local: the one at DYNAMODB_ENDPOINT if set,
# else its own instance (infra/dynamodb-local.sh, stopped at exit).
# Installs `wrk` (apt-get) and node-oidc-provider (npm, into the ignored .cache/bench/) on first
# use. Not part of infra/test.sh: numbers from a shared 2-core machine are for comparing on the
# same machine, not for asserting; the summary records the machine's load during the run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

THREADS="${BENCH_THREADS:-2}"
CONNECTIONS="${BENCH_CONNECTIONS:-32}"
DURATION="${BENCH_DURATION:-10s}"
COLD_START_RUNS="${BENCH_COLD_STARTS:-20}"
ROUNDS="${BENCH_ROUNDS:-5}"
OIDC_PROVIDER_SPEC='oidc-provider@^9'
LAMBDA_BINARIES=(hello-lambda token exchange company-authtoken)
CACHE="$ROOT/.cache/bench"
RUN="$CACHE/run-$$"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
PIDS=()
OWN_DYNAMODB_LOCAL=""
OWN_KMS_LOCAL=""

say() { echo "bench: $*" >&2; }
# shellcheck source=infra/bench/lib.sh
source "$ROOT/infra/bench/lib.sh"
die() {
	say "$*"
	exit 1
}

cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	if [[ -n "$OWN_DYNAMODB_LOCAL" ]]; then
		DYNAMODB_LOCAL_PID_FILE="$RUN/dynamodb-local.pid" infra/dynamodb-local.sh stop >/dev/null 2>&1 || true
	fi
	if [[ -n "$OWN_KMS_LOCAL" ]]; then
		KMS_LOCAL_PID_FILE="$RUN/kms-local.pid" infra/kms-local.sh stop >/dev/null 2>&1 || true
	fi
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

# The machine's state as a phase starts: the figures depend on who else uses the 2 cores.
LOADS=()
note_load() {
	local load rustc
	load="$(cut -d' ' -f1-3 /proc/loadavg)"
	rustc="$(pgrep -c -x rustc || true)"
	LOADS+=("| $1 | $load | ${rustc:-0} |")
}

# The integration suite (debug build) with a test filter and harness flags; output to a log.
# Not `cargo test -q`: libtest's terse dots would share lines with what the tests print.
integration_tests() {
	local log="$1"
	shift
	cargo test -p integration-tests --test integration -- "$@" >"$log" 2>&1
}

# --- Builds, all before any measurement ---------------------------------------------------------
build_everything() {
	local binary
	say "building the local server (release)"
	cargo build --release --bin token-service
	# Apart from the local server, so that cargo does not unify its `sqlite` feature into them:
	# the functions are built as deployed.
	say "building the Lambda functions and the hello-world baseline (release)"
	local packages=()
	for binary in "${LAMBDA_BINARIES[@]}"; do packages+=(-p "$binary"); done
	# The rotation function too: the lambda_runtime test runs it (it has no cold-start row).
	cargo build --release "${packages[@]}" -p rotate-keys
	say "building the fixed-rate load generator (release, tests/bin/fixed_rate.rs)"
	cargo build --release -p fixed-rate
	say "building the floor server (release)"
	cargo build --release -p integration-tests --example floor-server
	say "building the integration suite (debug: it only counts and times)"
	cargo test -q -p integration-tests --test integration --no-run
}

# --- 1. Side by side under wrk ------------------------------------------------------------------
# Both servers run at once (the idle one costs nothing) and take turns under wrk, ROUNDS times:
# ours, node's, ours, node's, ... A single run of each was not enough on this shared machine
# (node's figure moved between 3,100 and 4,650 req/s in five runs of the same code), so the
# summary gives each side's median and every run, and the ratio of the medians.
side_by_side() {
	local port peer_port demo client_id client_secret ours_auth ours_url peer_url peer_auth password_form
	port="$(free_port)"
	say "local server on 127.0.0.1:$port (SQLite, demo data in $RUN/data)"
	# wrk signs one user in 32 times at once; each attempt counts against the lockout until its
	# refund, so the default threshold (5) would lock the user and time refusals instead.
	# wrk is one client from one address sending thousands of requests a second: a flood by the
	# abuse limits' measure, so they are raised out of its reach (their counters are still
	# written on every request, as in service).
	export RATE_LIMIT_CLIENT_PER_MINUTE="${RATE_LIMIT_CLIENT_PER_MINUTE:-1000000000}"
	export RATE_LIMIT_ADDRESS_PER_MINUTE="${RATE_LIMIT_ADDRESS_PER_MINUTE:-1000000000}"
	LOCKOUT_THRESHOLD="${LOCKOUT_THRESHOLD:-1000}" DATA_DIR="$RUN/data" PORT="$port" \
		"$TARGET/release/token-service" >"$RUN/server.log" 2>&1 &
	PIDS+=($!)
	local ours_pid=$!
	wait_until_up "http://127.0.0.1:$port/v0/token/jwks" "$RUN/server.log"
	demo="$RUN/data/demo.json"
	client_id="$(json_field "$demo" client_id)"
	client_secret="$(json_field "$demo" client_secret)"
	ours_auth="$(basic "$client_id" "$client_secret")"
	ours_url="http://127.0.0.1:$port/v0/token"

	# The same build with METRICS=off (no recorder): what the metrics cost, in the same rounds.
	local unmetered_port unmetered_demo unmetered_url unmetered_auth
	unmetered_port="$(free_port)"
	say "local server with METRICS=off on 127.0.0.1:$unmetered_port (demo data in $RUN/data-unmetered)"
	METRICS=off DATA_DIR="$RUN/data-unmetered" PORT="$unmetered_port" \
		"$TARGET/release/token-service" >"$RUN/server-unmetered.log" 2>&1 &
	PIDS+=($!)
	wait_until_up "http://127.0.0.1:$unmetered_port/v0/token/jwks" "$RUN/server-unmetered.log"
	unmetered_demo="$RUN/data-unmetered/demo.json"
	unmetered_url="http://127.0.0.1:$unmetered_port/v0/token"
	unmetered_auth="$(basic "$(json_field "$unmetered_demo" client_id)" "$(json_field "$unmetered_demo" client_secret)")"
	password_form="$(form "{\"grant_type\":\"password\",\"username\":\"$(json_field "$demo" user_login)\",\"password\":\"$(json_field "$demo" user_password)\"}")"

	local peer_id="bench-client" peer_secret="bench-client-secret"
	peer_port="$(free_port)"
	say "node-oidc-provider on 127.0.0.1:$peer_port"
	NODE_ENV=production PORT="$peer_port" BENCH_CLIENT_ID="$peer_id" BENCH_CLIENT_SECRET="$peer_secret" \
		BENCH_OIDC_PROVIDER="$CACHE/node/node_modules/oidc-provider/lib/index.js" \
		node infra/bench/provider.mjs >"$RUN/provider.log" 2>&1 &
	PIDS+=($!)
	wait_until_up "http://127.0.0.1:$peer_port/.well-known/openid-configuration" "$RUN/provider.log"
	peer_url="http://127.0.0.1:$peer_port/token"
	peer_auth="$(basic "$peer_id" "$peer_secret")"

	local floor_port floor_url
	floor_port="$(free_port)"
	say "floor server on 127.0.0.1:$floor_port (HTTP + one ES256 signature, tests/bin/floor_server.rs)"
	PORT="$floor_port" "$TARGET/release/examples/floor-server" >"$RUN/floor.log" 2>&1 &
	PIDS+=($!)
	local floor_pid=$!
	floor_url="http://127.0.0.1:$floor_port/v0/token"
	local tries=0
	until curl -s -o /dev/null -X POST -d grant_type=client_credentials "$floor_url"; do
		tries=$((tries + 1))
		((tries < 100)) || die "the floor server did not start: $(cat "$RUN/floor.log")"
		sleep 0.1
	done

	OURS_CC_RUNS=()
	UNMETERED_CC_RUNS=()
	PEER_CC_RUNS=()
	FLOOR_CC_RUNS=()
	# Each server's own CPU time per request: unlike req/s, it does not move with the share of
	# the cores wrk or another process takes.
	OURS_CPU_RUNS=()
	FLOOR_CPU_RUNS=()
	local round cpu
	for round in $(seq 1 "$ROUNDS"); do
		say "wrk: local server, client_credentials (round $round of $ROUNDS)"
		note_load "wrk: local server, round $round"
		cpu="$(cpu_seconds "$ours_pid")"
		OURS_CC_RUNS+=("$(load "$ours_url" "$ours_auth" grant_type=client_credentials)")
		OURS_CPU_RUNS+=("$(cpu_per_request "$ours_pid" "$cpu" "${OURS_CC_RUNS[-1]}")")
		say "wrk: local server with METRICS=off, client_credentials (round $round of $ROUNDS)"
		note_load "wrk: local server METRICS=off, round $round"
		UNMETERED_CC_RUNS+=("$(load "$unmetered_url" "$unmetered_auth" grant_type=client_credentials)")
		say "wrk: node-oidc-provider, client_credentials (round $round of $ROUNDS)"
		note_load "wrk: node-oidc-provider, round $round"
		PEER_CC_RUNS+=("$(load "$peer_url" "$peer_auth" grant_type=client_credentials)")
		say "wrk: floor server, client_credentials (round $round of $ROUNDS)"
		note_load "wrk: floor server, round $round"
		cpu="$(cpu_seconds "$floor_pid")"
		FLOOR_CC_RUNS+=("$(load "$floor_url" "$ours_auth" grant_type=client_credentials)")
		FLOOR_CPU_RUNS+=("$(cpu_per_request "$floor_pid" "$cpu" "${FLOOR_CC_RUNS[-1]}")")
	done
	say "wrk: local server, password"
	note_load "wrk: local server, password"
	cpu="$(cpu_seconds "$ours_pid")"
	OURS_PASSWORD="$(load "$ours_url" "$ours_auth" "$password_form")"
	OURS_PASSWORD_CPU="$(cpu_per_request "$ours_pid" "$cpu" "$OURS_PASSWORD")"
	say "wrk: local server, refresh_token (rotation)"
	note_load "wrk: local server, refresh_token"
	refresh_tokens "$ours_url" "$ours_auth" "$password_form"
	cpu="$(cpu_seconds "$ours_pid")"
	OURS_REFRESH="$(load_refresh "$ours_url" "$ours_auth")"
	OURS_REFRESH_CPU="$(cpu_per_request "$ours_pid" "$cpu" "$OURS_REFRESH")"
	kill "${PIDS[-1]}" "${PIDS[-2]}" "${PIDS[-3]}" "${PIDS[-4]}"
	OURS_CC="$(printf '%s\n' "${OURS_CC_RUNS[@]}" | cut -d' ' -f1 | median_int)"
	UNMETERED_CC="$(printf '%s\n' "${UNMETERED_CC_RUNS[@]}" | cut -d' ' -f1 | median_int)"
	PEER_CC="$(printf '%s\n' "${PEER_CC_RUNS[@]}" | cut -d' ' -f1 | median_int)"
	FLOOR_CC="$(printf '%s\n' "${FLOOR_CC_RUNS[@]}" | cut -d' ' -f1 | median_int)"
	OURS_CPU="$(printf '%s\n' "${OURS_CPU_RUNS[@]}" | median_int)"
	FLOOR_CPU="$(printf '%s\n' "${FLOOR_CPU_RUNS[@]}" | median_int)"
}

use_dynamodb_local() {
	if [[ -z "${DYNAMODB_ENDPOINT:-}" ]]; then
		say "starting DynamoDB Local (infra/dynamodb-local.sh)"
		OWN_DYNAMODB_LOCAL=1
		DYNAMODB_ENDPOINT="$(DYNAMODB_LOCAL_PID_FILE="$RUN/dynamodb-local.pid" infra/dynamodb-local.sh start)"
	fi
	say "DynamoDB Local at $DYNAMODB_ENDPOINT"
	# DynamoDB Local accepts any credentials, but the SDK wants some.
	export DYNAMODB_ENDPOINT AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}" \
		AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}" AWS_REGION="${AWS_REGION:-us-east-1}"
}

# --- 2. DynamoDB calls per request ---------------------------------------------------------------
# The test prints `<flow>: <n> calls {"Operation": count, ...} <w> write units, <r> read units,
# <i> items written (...)` per counted flow; one thread, so libtest's "test <name> ... " prefix
# is the only thing sharing a line with it.
round_trips() {
	say "round-trip budgets (tests/integration/round_trips.rs)"
	note_load "round trips"
	ROUND_TRIPS_VERDICT="all within their budgets (the test passed)"
	integration_tests "$RUN/round_trips.log" round_trips:: --nocapture --test-threads=1 ||
		ROUND_TRIPS_VERDICT="OVER BUDGET or failed: $(grep -m1 -E 'DynamoDB calls, budget|panicked' "$RUN/round_trips.log" || echo "see the output above")"
	ROUND_TRIPS="$(sed -E 's/^test [^ ]+ \.\.\. //' "$RUN/round_trips.log" |
		sed -nE 's/^([A-Za-z0-9_ ,()-]+): ([0-9]+) calls \{([^}]*)\} ([0-9.]+) write units, ([0-9.]+) read units, .*$/| \1 | \2 | \3 | \4 | \5 |/p' |
		sed -E 's/"([A-Za-z]+)": ([0-9]+)/\2 \1/g')"
	[[ -n "$ROUND_TRIPS" ]] || {
		cat "$RUN/round_trips.log" >&2
		die "the round-trip test printed no counts"
	}
	[[ "$ROUND_TRIPS_VERDICT" == all* ]] || cat "$RUN/round_trips.log" >&2
}

# --- 3. Cold starts ------------------------------------------------------------------------------
# The test prints `  <binary>  init <ms> ms   first request <ms> ms` per binary; the median of
# each column over the runs.
cold_starts() {
	local run
	: >"$RUN/cold_starts.txt"
	for run in $(seq 1 "$COLD_START_RUNS"); do
		say "cold starts, run $run of $COLD_START_RUNS (release binaries in $TARGET/release)"
		note_load "cold starts, run $run"
		LAMBDA_BINARIES_DIR="$TARGET/release" integration_tests "$RUN/lambda_runtime.log" \
			lambda_runtime:: --test-threads=1 || {
			cat "$RUN/lambda_runtime.log" >&2
			die "the lambda_runtime test failed"
		}
		sed -nE 's/^  ([a-z-]+) +init +([0-9.]+) ms +first request +([0-9.]+) ms$/\1 \2 \3/p' \
			"$RUN/lambda_runtime.log" >>"$RUN/cold_starts.txt"
		sed -n '/^key ring read by/,/^$/{/^  /p}' "$RUN/lambda_runtime.log" |
			sed "s/^/  run $run: /" >>"$RUN/key_ring_reads.txt"
	done
	COLD_STARTS=""
	local binary inits init least first both baseline="" baseline_both=""
	for binary in "${LAMBDA_BINARIES[@]}"; do
		inits="$(awk -v b="$binary" '$1 == b { print $2 }' "$RUN/cold_starts.txt")"
		[[ -n "$inits" ]] || die "no cold-start figures for $binary: $(cat "$RUN/lambda_runtime.log")"
		init="$(median <<<"$inits")"
		least="$(sort -n <<<"$inits" | head -1)"
		first="$(awk -v b="$binary" '$1 == b { print $3 }' "$RUN/cold_starts.txt" | median)"
		# Init plus first response, per run, then the median: what a user's first request waits.
		both="$(awk -v b="$binary" '$1 == b { printf "%.1f\n", $2 + $3 }' "$RUN/cold_starts.txt" | median)"
		baseline="${baseline:-$init}" # hello-lambda comes first
		baseline_both="${baseline_both:-$both}"
		COLD_STARTS+="| $binary | $least ms | $init ms | $(ratio "$init" "$baseline") | $first ms | $both ms | $(ratio "$both" "$baseline_both") | $(stat -c %s "$TARGET/release/$binary" | awk '{ printf "%.1f MiB", $1 / 1048576 }') |"$'\n'
	done
}

# --- 4. DPoP beside bearer, and the signing cost -------------------------------------------------
# client_credentials with a DPoP proof per request beside the same grant as a bearer request,
# in the in-process harness (wrk cannot send a fresh proof per request): the price of the proof's
# checks and its jti's conditional write, on both stores.
dpop_beside_bearer() {
	say "DPoP beside bearer, client_credentials (tests/benches/token_endpoint.rs)"
	note_load "DPoP beside bearer"
	DPOP_BESIDE_BEARER="$(BENCH_CASES=client_credentials,client_credentials+dpop BENCH_REQUESTS="${BENCH_REQUESTS:-4000}" \
		cargo bench -p integration-tests --bench token_endpoint 2>"$RUN/dpop.log")" || {
		cat "$RUN/dpop.log" >&2
		die "the DPoP harness failed"
	}
}

signing_cost() {
	if [[ -z "${KMS_ENDPOINT:-}" ]]; then
		say "starting the local KMS (infra/kms-local.sh)"
		OWN_KMS_LOCAL=1
		KMS_ENDPOINT="$(KMS_LOCAL_PID_FILE="$RUN/kms-local.pid" infra/kms-local.sh start)"
	fi
	export KMS_ENDPOINT
	say "signing cost, local key beside KMS at $KMS_ENDPOINT (tests/benches/signing_cost.rs)"
	note_load "signing cost"
	SIGNING_COST="$(cargo bench -p integration-tests --bench signing_cost 2>"$RUN/signing_cost.log")" || {
		cat "$RUN/signing_cost.log" >&2
		die "the signing cost harness failed"
	}
}

# --- 5. Latency percentiles at a fixed rate -------------------------------------------------------
latency_percentiles() {
	say "latency at half the maximum (infra/bench-latency.sh)"
	note_load "latency percentiles"
	LATENCY="$(BENCH_NO_BUILD=1 infra/bench-latency.sh)" || {
		echo "$LATENCY" >&2
		die "infra/bench-latency.sh failed"
	}
}

# --- The run -------------------------------------------------------------------------------------
ensure_tools
mkdir -p "$RUN"
STARTED="$(date -u '+%Y-%m-%d %H:%M UTC')"
UPTIME_AT_START="$(uptime)"
build_everything
side_by_side
latency_percentiles
use_dynamodb_local
round_trips
cold_starts
signing_cost
dpop_beside_bearer
PER_GRANT=""
if [[ "${1:-}" == "--per-grant" ]]; then
	say "the in-process harness (cargo bench, tests/benches/token_endpoint.rs)"
	note_load "per-grant harness"
	PER_GRANT="$(cargo bench -p integration-tests --bench token_endpoint)"
fi
note_load "end"

cat <<EOF

== infra/bench.sh, $STARTED, $(nproc) cores ==

Machine load (load average 1, 5, 15 min; rustc processes running, e.g. other engineers' builds):
uptime at start: $UPTIME_AT_START
uptime at end:   $(uptime)

| phase | load average | rustc processes |
|---|---|---|
$(printf '%s\n' "${LOADS[@]}")

Side by side: wrk -t$THREADS -c$CONNECTIONS -d$DURATION, the $(nproc) cores shared by wrk and the server, the three servers taking turns

client_credentials against the floor (HTTP + one ES256 signature, no store): floor median $FLOOR_CC req/s (rounds $(printf '%s, ' "${FLOOR_CC_RUNS[@]}" | sed 's/, $//')); token-service at $(awk -v a="${OURS_CC%% *}" -v b="${FLOOR_CC%% *}" 'BEGIN { printf "%.0f %%", 100 * a / b }') of the floor, node-oidc-provider at $(awk -v a="${PEER_CC%% *}" -v b="${FLOOR_CC%% *}" 'BEGIN { printf "%.0f %%", 100 * a / b }'); refresh_token at $(awk -v a="${OURS_REFRESH%% *}" -v b="${FLOOR_CC%% *}" 'BEGIN { printf "%.0f %%", 100 * a / b }') and password at $(awk -v a="${OURS_PASSWORD%% *}" -v b="${FLOOR_CC%% *}" 'BEGIN { printf "%.2f %%", 100 * a / b }') of the same floor (password: one Argon2id verification per request, by design)

The server's own CPU time per client_credentials request (user + system, medians of $ROUNDS rounds; wrk's share of the cores does not enter it): token-service $OURS_CPU µs, the floor $FLOOR_CPU µs, so token-service at $(awk -v a="$OURS_CPU" -v b="$FLOOR_CPU" 'BEGIN { printf "%.0f %%", 100 * b / a }') of the floor by this measure (rounds: $(printf '%s, ' "${OURS_CPU_RUNS[@]}" | sed 's/, $//') µs against $(printf '%s, ' "${FLOOR_CPU_RUNS[@]}" | sed 's/, $//') µs); one round each of the other grants: refresh_token $OURS_REFRESH_CPU µs ($(awk -v a="$OURS_REFRESH_CPU" -v b="$FLOOR_CPU" 'BEGIN { printf "%.0f %%", 100 * b / a }') of the floor), password $OURS_PASSWORD_CPU µs ($(awk -v a="$OURS_PASSWORD_CPU" -v b="$FLOOR_CPU" 'BEGIN { printf "%.2f %%", 100 * b / a }'), its Argon2id verification)

What the metrics cost: client_credentials, median of $ROUNDS rounds, $OURS_CC req/s with metrics (the default) against $UNMETERED_CC req/s with METRICS=off ($(awk -v a="${OURS_CC%% *}" -v b="${UNMETERED_CC%% *}" 'BEGIN { printf "%+.1f %%", 100 * (a - b) / b }'); rounds without: $(printf '%s, ' "${UNMETERED_CC_RUNS[@]}" | sed 's/, $//'))

| grant | token-service req/s | node-oidc-provider $(json_field "$CACHE/node/node_modules/oidc-provider/package.json" version) req/s | ratio |
|---|---|---|---|
| client_credentials, median of $ROUNDS rounds | $OURS_CC | $PEER_CC | $(ratio "$OURS_CC" "$PEER_CC") |
| client_credentials, every round | $(printf '%s, ' "${OURS_CC_RUNS[@]}" | sed 's/, $//') | $(printf '%s, ' "${PEER_CC_RUNS[@]}" | sed 's/, $//') | |
| password | $OURS_PASSWORD | n/a (no password grant) | |
| refresh_token (rotation: each request a token's first use) | $OURS_REFRESH | n/a (needs an interactive code flow) | |

DynamoDB calls per request, warm instance, counted at the wire: $ROUND_TRIPS_VERDICT

| flow | calls | by operation | write units | read units |
|---|---|---|---|---|
$ROUND_TRIPS

Cold starts, release binaries under the in-test Runtime API over DynamoDB Local, $COLD_START_RUNS runs (goals: init median at most 1.5x hello-lambda's; init plus first response at most 2x hello-lambda's, whose first request reads one item)

| binary | init, least | init, median | init median / hello-lambda's | first request, median | init + first response, median | / hello-lambda's | size |
|---|---|---|---|---|---|---|---|
$COLD_STARTS
The key ring's read at the token function's init, every run (debug test, release binaries):
$(cat "$RUN/key_ring_reads.txt" 2>/dev/null)

Signing cost (the KMS emulator runs on this machine; AWS KMS adds a network round trip):
$SIGNING_COST

client_credentials with a DPoP proof beside the bearer request (in-process harness, the same
cores; every proof signed before the clock starts, so the figure is the server's work):
$DPOP_BESIDE_BEARER
$LATENCY
EOF
if [[ -n "$PER_GRANT" ]]; then
	printf '\nIn-process harness, per grant and store:\n\n%s\n' "$PER_GRANT"
fi
cpu_ms() { awk -v rps="${1%% *}" -v cores="$(nproc)" 'BEGIN { if (rps > 0) printf "%.3f", 1000 * cores / rps }'; }
printf '\nCost model (infra/cost-model.py, this run'"'"'s counts and CPU per request):\n\n'
python3 infra/cost-model.py --round-trips "$RUN/round_trips.log" \
	--cpu-ms "client_credentials=$(cpu_ms "$OURS_CC")" --cpu-ms "password=$(cpu_ms "$OURS_PASSWORD")" \
	--cpu-ms "refresh=$(cpu_ms "$OURS_REFRESH")" ||
	say "the cost model failed"
[[ "$ROUND_TRIPS_VERDICT" == all* ]]
