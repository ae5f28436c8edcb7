#!/usr/bin/env bash
# The migration at scale: imports 100,000 legacy tokens through the import path into SQLite and
# into DynamoDB Local, times it, and exchanges a random sample of 100 of them over HTTP.
#
#   infra/bench-exchange-import.sh             both stores
#   infra/bench-exchange-import.sh sqlite      one store (sqlite | dynamodb)
#
# Uses DYNAMODB_ENDPOINT if set; otherwise starts its own DynamoDB Local (infra/dynamodb-local.sh)
# and stops it at the end. The numbers are printed as lines starting with "BENCH".
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

filter="exchange::import_benchmark::${1:-}"
RUN_DIR=""
cleanup() {
	if [[ -n "$RUN_DIR" ]]; then
		DYNAMODB_LOCAL_PID_FILE="$RUN_DIR/dynamodb-local.pid" infra/dynamodb-local.sh stop || true
		rm -rf "$RUN_DIR"
	fi
}
trap cleanup EXIT

if [[ "${1:-}" != "sqlite" && -z "${DYNAMODB_ENDPOINT:-}" ]]; then
	mkdir -p .cache/dynamodb-local/run
	RUN_DIR="$(mktemp -d "$ROOT/.cache/dynamodb-local/run/bench.XXXXXX")"
	DYNAMODB_ENDPOINT="$(DYNAMODB_LOCAL_PID_FILE="$RUN_DIR/dynamodb-local.pid" \
		infra/dynamodb-local.sh start)"
	export DYNAMODB_ENDPOINT
fi
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"

# The dev profile by default (the crypto crates are optimised in it already, and it shares the
# test build's artefacts); BENCH_CARGO_ARGS=--release for a release build. One test at a time so
# the two stores do not compete for the CPU.
# shellcheck disable=SC2086
cargo test ${BENCH_CARGO_ARGS:-} -p integration-tests --test integration "$filter" -- \
	--ignored --nocapture --test-threads=1 2>&1 | grep -E '^BENCH|^test |test result|panicked'
