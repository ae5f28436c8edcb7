#!/usr/bin/env bash
# Latency percentiles at a fixed rate (docs/benchmarks.md, "Latency at half the maximum"): the
# release local server (SQLite, demo data) under tests/bin/fixed_rate.rs. Each case is first run
# as fast as it is answered (its maximum, and the server's CPU time per request), then held at
# half that rate, and p50, p90, p99, p99.9 and the maximum are read with every latency measured
# from the time its request was due (a stall delays the requests due behind it, and they count).
#
# Cases: client_credentials; the same on a second server started with METRICS=off; the same with
# a DPoP proof per request (proofs signed before the clock starts); refresh_token (the demo
# client's rotate policy: each connection sends the successor it was given, from tokens of the
# password grant made before the run); authorization_code (codes minted before the run through
# the authorize endpoint with one sign-in session, infra/bench/codes.mjs). METRICS=off is held at
# the rate of plain client_credentials, so that their percentiles compare; each other case at
# half its own maximum.
# LATENCY_ROUNDS (3) rounds, the cases taking turns; the summary gives each round and medians.
#
#   infra/bench-latency.sh                 # builds what it needs (release), then measures
#   LATENCY_SECONDS=10 LATENCY_MAX_SECONDS=3 LATENCY_CONNECTIONS=32 LATENCY_ROUNDS=3 \
#     LATENCY_CASES=client_credentials,refresh_token infra/bench-latency.sh
#   BENCH_NO_BUILD=1 infra/bench-latency.sh   # infra/bench.sh, which built them already
#   BENCH_NO_BUILD=1 LATENCY_SERVER=path/to/another/token-service infra/bench-latency.sh
#                                              # another build of the server (before and after)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

SECONDS_HELD="${LATENCY_SECONDS:-10}"
SECONDS_MAX="${LATENCY_MAX_SECONDS:-3}"
CONNECTIONS="${LATENCY_CONNECTIONS:-32}"
ROUNDS="${LATENCY_ROUNDS:-3}"
CASES="${LATENCY_CASES:-client_credentials,client_credentials_metrics_off,client_credentials_dpop,refresh_token,authorization_code}"
# lib.sh's refresh_tokens makes CONNECTIONS + 2 * THREADS tokens.
THREADS=0
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
RUN="$ROOT/.cache/bench/latency-$$"
GENERATOR="$TARGET/release/fixed-rate"
SERVER="${LATENCY_SERVER:-$TARGET/release/token-service}"
PIDS=()

say() { echo "bench-latency: $*" >&2; }
die() {
	say "$*"
	exit 1
}
# shellcheck source=infra/bench/lib.sh
source "$ROOT/infra/bench/lib.sh"
cleanup() {
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	rm -rf "$RUN"
}
trap cleanup EXIT
mkdir -p "$RUN"

if [[ -z "${BENCH_NO_BUILD:-}" ]]; then
	say "building the local server and the load generator (release)"
	cargo build --release --bin token-service
	cargo build --release -p fixed-rate
fi

export RATE_LIMIT_CLIENT_PER_MINUTE="${RATE_LIMIT_CLIENT_PER_MINUTE:-1000000000}"
export RATE_LIMIT_ADDRESS_PER_MINUTE="${RATE_LIMIT_ADDRESS_PER_MINUTE:-1000000000}"
export LOCKOUT_THRESHOLD="${LOCKOUT_THRESHOLD:-1000}"

# start_server NAME [VAR=value ...]: a release server with its own demo data; sets BASE, PID, AUTH
# and PASSWORD_FORM.
start_server() {
	local name="$1" port
	shift
	port="$(free_port)"
	env "$@" DATA_DIR="$RUN/$name" PORT="$port" "$SERVER" >"$RUN/$name.log" 2>&1 &
	PIDS+=($!)
	PID=$!
	BASE="http://127.0.0.1:$port"
	wait_until_up "$BASE/v0/token/jwks" "$RUN/$name.log"
	local demo="$RUN/$name/demo.json"
	AUTH="$(basic "$(json_field "$demo" client_id)" "$(json_field "$demo" client_secret)")"
	PASSWORD_FORM="$(form "{\"grant_type\":\"password\",\"username\":\"$(json_field "$demo" user_login)\",\"password\":\"$(json_field "$demo" user_password)\"}")"
	CLIENT_ID="$(json_field "$demo" client_id)"
	USER_LOGIN="$(json_field "$demo" user_login)"
	USER_PASSWORD="$(json_field "$demo" user_password)"
}

start_server metered
MAIN_BASE="$BASE" MAIN_PID="$PID" MAIN_AUTH="$AUTH" MAIN_PASSWORD_FORM="$PASSWORD_FORM"
MAIN_CLIENT_ID="$CLIENT_ID" MAIN_USER_LOGIN="$USER_LOGIN" MAIN_USER_PASSWORD="$USER_PASSWORD"
start_server unmetered METRICS=off
OFF_BASE="$BASE" OFF_PID="$PID" OFF_AUTH="$AUTH"

field() { sed -nE "s/.* $1=([0-9.]+).*/\\1/p" <<<"$2"; }

# generate URL AUTH SECONDS [RATE] -- SOURCE ARGS: one generator run; prints its FIXED_RATE line.
generate() {
	local url="$1" auth="$2" seconds="$3" rate="$4"
	shift 5
	local rate_args=()
	[[ -z "$rate" ]] || rate_args=(--rate "$rate")
	"$GENERATOR" --url "$url" --authorization "$auth" --connections "$CONNECTIONS" \
		--seconds "$seconds" "${rate_args[@]}" "$@" 2>>"$RUN/generator.log"
}

# source_args CASE PHASE: the generator's form arguments, preparing tokens or codes as needed.
source_args() {
	case "$1" in
	client_credentials* ) echo --form grant_type=client_credentials ;;
	refresh_token)
		refresh_tokens "$MAIN_BASE/v0/token" "$MAIN_AUTH" "$MAIN_PASSWORD_FORM"
		cp "$RUN/refresh-tokens" "$RUN/refresh-$2"
		echo --refresh-tokens "$RUN/refresh-$2"
		;;
	authorization_code)
		node infra/bench/codes.mjs "$MAIN_BASE" "$MAIN_CLIENT_ID" "$MAIN_USER_LOGIN" "$MAIN_USER_PASSWORD" "$3" "$RUN/codes-$2"
		echo --forms "$RUN/codes-$2"
		;;
	esac
}

ROWS=()
declare -A HELD_RATE
for round in $(seq 1 "$ROUNDS"); do
	IFS=, read -ra cases <<<"$CASES"
	for case in "${cases[@]}"; do
		url="$MAIN_BASE/v0/token" auth="$MAIN_AUTH" pid="$MAIN_PID" extra=()
		case "$case" in
		client_credentials_metrics_off) url="$OFF_BASE/v0/token" auth="$OFF_AUTH" pid="$OFF_PID" ;;
		client_credentials_dpop) url="$MAIN_BASE/oauth2/v0/token" extra=(--dpop) ;;
		esac
		say "round $round: $case, as fast as answered (${SECONDS_MAX}s)"
		# Tokens and codes are made first: their password grants and sign-ins are not the
		# measured requests, and the server's CPU is read around the generator's run alone.
		max_args="$(source_args "$case" max "${LATENCY_MAX_CODES:-4000}")"
		load_at_max="$(cut -d' ' -f1 /proc/loadavg)"
		cpu_before="$(cpu_seconds "$pid")"
		# shellcheck disable=SC2086
		max_line="$(generate "$url" "$auth" "$SECONDS_MAX" "" -- $max_args "${extra[@]}")"
		max_rps="$(field req_per_s "$max_line")"
		cpu_us="$(awk -v b="$cpu_before" -v a="$(cpu_seconds "$pid")" -v n="$(field requests "$max_line")" \
			'BEGIN { printf "%.0f", (a - b) * 1e6 / n }')"
		rate="$(awk -v r="$max_rps" 'BEGIN { printf "%.0f", r / 2 }')"
		# METRICS=off is held at the rate of the same round's client_credentials, so that their
		# percentiles compare; DPoP, whose maximum is lower, at half its own.
		if [[ "$case" == client_credentials_metrics_off && -n "${HELD_RATE[$round]:-}" ]]; then
			rate="${HELD_RATE[$round]}"
		fi
		if [[ "$case" == client_credentials ]]; then HELD_RATE[$round]="$rate"; fi
		say "round $round: $case at $rate req/s (${SECONDS_HELD}s)"
		codes=$((rate * SECONDS_HELD + rate))
		rate_args="$(source_args "$case" rate "$codes")"
		load_at_rate="$(cut -d' ' -f1 /proc/loadavg)"
		# shellcheck disable=SC2086
		line="$(generate "$url" "$auth" "$SECONDS_HELD" "$rate" -- $rate_args "${extra[@]}")"
		failures="$(($(field non_2xx "$line") + $(field io_errors "$line") + $(field non_2xx "$max_line") + $(field io_errors "$max_line")))"
		ROWS+=("$case|$round|$max_rps|$cpu_us|$rate|$(field req_per_s "$line")|$(field p50_ms "$line")|$(field p90_ms "$line")|$(field p99_ms "$line")|$(field p999_ms "$line")|$(field max_ms "$line")|$failures|$load_at_max, $load_at_rate")
	done
done

echo
echo "Latency at half the maximum: release local server $SERVER (SQLite), tests/bin/fixed_rate.rs with $CONNECTIONS connections, ${SECONDS_MAX}s as fast as answered then ${SECONDS_HELD}s at half that rate, latency from each request's due time; $(nproc) cores shared by the generator and the servers"
echo "uptime at end: $(uptime)"
echo
echo "| case | round | max req/s | server CPU µs/req at max | held req/s | achieved | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | failures | load (max, held) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}" | sed -E 's/\|/ | /g; s/^/| /; s/$/ |/'
echo
echo "Medians of the rounds:"
echo
echo "| case | max req/s | server CPU µs/req | held req/s | p50 ms | p90 ms | p99 ms | p99.9 ms |"
echo "|---|---|---|---|---|---|---|---|"
IFS=, read -ra cases <<<"$CASES"
for case in "${cases[@]}"; do
	col() { printf '%s\n' "${ROWS[@]}" | awk -F'|' -v c="$case" -v k="$1" '$1 == c { print $k }' | median; }
	echo "| $case | $(col 3) | $(col 4) | $(col 5) | $(col 7) | $(col 8) | $(col 9) | $(col 10) |"
done
if printf '%s\n' "${ROWS[@]}" | awk -F'|' '$12 != 0 { bad = 1 } END { exit !bad }'; then
	say "some requests failed; first failures: $(sort -u "$RUN/generator.log" | head -5)"
	exit 1
fi
