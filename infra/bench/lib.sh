# Helpers of infra/bench.sh: ports, waiting, one wrk run, forms and medians. Sourced; expects
# ROOT, RUN, THREADS, CONNECTIONS, DURATION and die().

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
	local out
	# A failing first request means a broken setup, not a slow server: say so instead of timing it.
	local status
	status="$(curl -s -o "$RUN/probe" -w '%{http_code}' -H "Authorization: $2" --data "$3" "$1")"
	[[ "$status" == 200 ]] || die "POST $1 ($3) answered $status: $(cat "$RUN/probe")"
	out="$(BENCH_AUTHORIZATION="$2" BENCH_FORM="$3" wrk_run token.lua "$1")"
	result_of "$out"
}

# refresh_tokens URL AUTHORIZATION FORM: a refresh token per connection (and one spare per
# thread) from the password grant FORM, in $RUN/refresh-tokens for load_refresh. Apart from the
# measured run, so that its Argon2id verifications count in neither its req/s nor its CPU time.
refresh_tokens() {
	local tokens="$RUN/refresh-tokens"
	: >"$tokens"
	for _ in $(seq 1 $((CONNECTIONS + 2 * THREADS))); do
		curl -s -H "Authorization: $2" --data "$3" "$1" |
			node -e 'let s = ""; process.stdin.on("data", d => s += d).on("end", () => console.log(JSON.parse(s).refresh_token))' >>"$tokens"
	done
	! grep -q undefined "$tokens" || die "the password grant ($3) gave no refresh token"
}

# load_refresh URL AUTHORIZATION: as load, each request a refresh token's first use
# (infra/bench/refresh.lua): each connection starts with a token of refresh_tokens' and goes on
# with the successor it was given.
load_refresh() {
	local out
	out="$(BENCH_AUTHORIZATION="$2" BENCH_REFRESH_TOKENS="$RUN/refresh-tokens" BENCH_SCRIPTS="$ROOT/infra/bench" BENCH_WRK_THREADS="$THREADS" \
		wrk_run refresh.lua "$1")"
	result_of "$out"
}

# cpu_seconds PID: the process's user and system CPU time so far, in seconds.
cpu_seconds() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"
}

# cpu_per_request PID CPU_SECONDS_BEFORE "REQ_PER_S ...": the process's CPU time per request (µs)
# over the wrk run just ended, which sent REQ_PER_S for $DURATION.
cpu_per_request() {
	local seconds
	seconds="$(duration_seconds "$DURATION")"
	awk -v before="$2" -v after="$(cpu_seconds "$1")" -v rps="${3%% *}" -v s="$seconds" \
		'BEGIN { printf "%.0f", (after - before) * 1e6 / (rps * s) }'
}

# duration_seconds 10s|2m|1h: wrk's duration in seconds.
duration_seconds() {
	case "$1" in
	*s) echo "${1%s}" ;;
	*m) echo $((${1%m} * 60)) ;;
	*h) echo $((${1%h} * 3600)) ;;
	*) echo "$1" ;;
	esac
}

wrk_run() {
	wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --timeout 10s -s "$ROOT/infra/bench/$1" "$2"
}

# result_of WRK_OUTPUT: "req/s", with any failures after it.
result_of() {
	local out="$1" line
	line="$(grep '^BENCH_RESULT' <<<"$out")" || die "wrk printed no result: $out"
	local rps non_2xx socket_errors
	rps="$(sed -E 's/.*req_per_s=([0-9]+).*/\1/' <<<"$line")"
	non_2xx="$(sed -E 's/.*non_2xx=([0-9]+).*/\1/' <<<"$line")"
	socket_errors="$(sed -E 's/.*socket_errors=([0-9]+).*/\1/' <<<"$line")"
	local failures=()
	((non_2xx == 0)) || failures+=("$non_2xx non-2xx")
	((socket_errors == 0)) || failures+=("$socket_errors socket errors or timeouts")
	if ((${#failures[@]} > 0)); then
		echo "$rps ($(
			IFS=,
			echo "${failures[*]}" | sed 's/,/, /g'
		))"
	else
		echo "$rps"
	fi
}

basic() { printf 'Basic %s' "$(printf '%s:%s' "$1" "$2" | base64 -w0)"; }
form() { node -e 'console.log(new URLSearchParams(JSON.parse(process.argv[1])).toString())' "$1"; }
json_field() { node -e 'console.log(require(process.argv[1])[process.argv[2]])' "$1" "$2"; }
ratio() { awk -v a="${1%% *}" -v b="${2%% *}" 'BEGIN { printf "%.2f×", a / b }'; }

median_int() { median | cut -d. -f1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
