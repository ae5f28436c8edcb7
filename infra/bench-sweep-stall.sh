#!/usr/bin/env bash
# The sweeper's effect on request latency (docs/benchmarks.md, "Checkpoints every 5 ms, and the
# sweeper's stall"): the release local server (SQLite, demo data) whose file holds
# SWEEP_ROWS (300,000) `used_jtis` rows expiring 45 s after the server starts, under
# `client_credentials` at a fixed SWEEP_RATE (10,000) a second for 75 s, which spans the sweep
# at 60 s that deletes them. Prints the generator's percentiles and the rows left (0: swept).
#
#   infra/bench-sweep-stall.sh                                  # builds what it needs (release)
#   BENCH_NO_BUILD=1 SWEEP_SERVER=path/to/token-service infra/bench-sweep-stall.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
SERVER="${SWEEP_SERVER:-$TARGET/release/token-service}"
ROWS="${SWEEP_ROWS:-300000}"
RATE="${SWEEP_RATE:-10000}"
RUN="$ROOT/.cache/bench/sweep-$$"
THREADS=0
CONNECTIONS=32
PID=""
say() { echo "bench-sweep-stall: $*" >&2; }
die() {
	say "$*"
	exit 1
}
# shellcheck source=infra/bench/lib.sh
source "$ROOT/infra/bench/lib.sh"
cleanup() {
	[[ -z "$PID" ]] || kill "$PID" 2>/dev/null || true
	rm -rf "$RUN"
}
trap cleanup EXIT
mkdir -p "$RUN"
export RATE_LIMIT_CLIENT_PER_MINUTE="${RATE_LIMIT_CLIENT_PER_MINUTE:-1000000000}"
export RATE_LIMIT_ADDRESS_PER_MINUTE="${RATE_LIMIT_ADDRESS_PER_MINUTE:-1000000000}"

if [[ -z "${BENCH_NO_BUILD:-}" ]]; then
	say "building the local server and the load generator (release)"
	cargo build --release --bin token-service
	cargo build --release -p fixed-rate
fi

port="$(free_port)"
start() {
	DATA_DIR="$RUN/data" PORT="$port" "$SERVER" >"$RUN/server.log" 2>&1 &
	PID=$!
	wait_until_up "http://127.0.0.1:$port/v0/token/jwks" "$RUN/server.log"
}
# Once for the schema and the demo data, then the expiring rows, then again: the sweeper's first
# pass runs at start, its second 60 s later.
start
kill "$PID"
wait "$PID" 2>/dev/null || true
say "adding $ROWS used_jtis rows that expire in 45 s"
python3 - "$RUN/data/tokens.sqlite3" "$ROWS" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
expires = int(time.time()) + 45
db.executemany("INSERT INTO used_jtis (key, expires_at) VALUES (?, ?)",
               ((f"seed-{i:07d}", expires) for i in range(int(sys.argv[2]))))
db.commit()
PY
start
demo="$RUN/data/demo.json"
auth="$(basic "$(json_field "$demo" client_id)" "$(json_field "$demo" client_secret)")"
say "client_credentials at $RATE a second for 75 s (the sweep runs at 60 s)"
"$TARGET/release/fixed-rate" --url "http://127.0.0.1:$port/v0/token" --authorization "$auth" \
	--connections "$CONNECTIONS" --seconds 75 --rate "$RATE" --form grant_type=client_credentials 2>>"$RUN/generator.log"
python3 -c 'import sqlite3, sys; print("used_jtis rows left:", sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM used_jtis").fetchone()[0])' "$RUN/data/tokens.sqlite3"
