#!/usr/bin/env bash
# Benchmarks: the token endpoint per grant on SQLite and DynamoDB Local (optimised build).
#
#   infra/bench.sh
#
# Prints requests per second and latency percentiles. Not part of infra/test.sh: numbers from a
# shared 2-core machine are for comparing changes on the same machine, not for asserting.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

export DYNAMODB_LOCAL_PID_FILE="$ROOT/.cache/dynamodb-local/run/bench.pid"
trap 'infra/dynamodb-local.sh stop >/dev/null 2>&1 || true' EXIT
DYNAMODB_ENDPOINT="$(infra/dynamodb-local.sh start)"
export DYNAMODB_ENDPOINT
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}" AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}" AWS_REGION="${AWS_REGION:-us-east-1}"
cargo bench -p integration-tests --bench token_endpoint
