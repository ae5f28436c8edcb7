#!/usr/bin/env bash
# The middle tier between the quick unit tests and infra/test.sh: every crate's unit tests, the
# integration binary's SQLite suites (every endpoint, flow and store test on SQLite) and the
# DynamoDB store's conformance suite, in a few minutes once built. It leaves out the DynamoDB
# variants of the endpoint suites, the Lambda binaries, the Chromium pages and the lints:
# infra/test.sh runs those.
#
#   infra/test-stores.sh            (extra arguments go to the test harness, e.g. --nocapture)
#
# Uses DYNAMODB_ENDPOINT and KMS_ENDPOINT when set; otherwise starts DynamoDB Local (Java 17)
# and the local KMS for the run and stops them after. The relying parties, identity providers
# and SCIM clients the SQLite suites talk to are installed into .cache/ on first use, as by
# infra/test.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

RUN_DIR="$(mktemp -d "${TMPDIR:-/tmp}/test-stores.XXXXXX")"
stop_emulators() {
	[[ ! -f "$RUN_DIR/dynamodb-local.pid" ]] ||
		DYNAMODB_LOCAL_PID_FILE="$RUN_DIR/dynamodb-local.pid" infra/dynamodb-local.sh stop || true
	[[ ! -f "$RUN_DIR/kms-local.pid" ]] ||
		KMS_LOCAL_PID_FILE="$RUN_DIR/kms-local.pid" infra/kms-local.sh stop || true
	rm -rf "$RUN_DIR"
}
trap stop_emulators EXIT

if [[ -z "${DYNAMODB_ENDPOINT:-}" ]]; then
	DYNAMODB_ENDPOINT="$(DYNAMODB_LOCAL_PID_FILE="$RUN_DIR/dynamodb-local.pid" infra/dynamodb-local.sh start)"
	export DYNAMODB_ENDPOINT
fi
if [[ -z "${KMS_ENDPOINT:-}" ]]; then
	KMS_ENDPOINT="$(KMS_LOCAL_PID_FILE="$RUN_DIR/kms-local.pid" infra/kms-local.sh start)"
	export KMS_ENDPOINT
fi
infra/relying-parties.sh install >/dev/null
infra/identity-providers.sh install >/dev/null
infra/scim-clients.sh install >/dev/null
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"

cargo test --workspace --lib --bins
# Test names carry their store (`…::sqlite::…`, `…_sqlite`); the DynamoDB store's own suite is
# `conformance_dynamodb::`. Eight threads: the suites mostly wait on SQLite's writer and SMTP.
RUST_TEST_THREADS="${RUST_TEST_THREADS:-8}" cargo test -p integration-tests --test integration -- \
	sqlite conformance_dynamodb:: --skip in_browser --skip second_factor_browser:: --skip passkeys:: --skip device::interop "$@"
