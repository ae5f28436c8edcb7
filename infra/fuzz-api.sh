#!/usr/bin/env bash
# Property-based fuzzing of the running service from its own OpenAPI document: starts the local
# server (target/debug/token-service, built by `cargo build --workspace --bins`) on SQLite with demo
# data in a fresh directory, runs schemathesis against /openapi.json, every operation, a bounded
# number of examples each, and stops the server.
#
# Fails on any 5xx, any response that does not match the document (status, content type,
# headers, body schema), or any request that takes longer than the timeout.
#
# schemathesis is installed from PyPI into the ignored .cache/venv on first use.
# Usage: infra/fuzz-api.sh   (MAX_EXAMPLES=N to change the examples per operation; FUZZ_SEED=N to
# replay a run: each run draws a new seed and prints it, so that runs explore new inputs and a
# failure can be reproduced)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

VENV="$ROOT/.cache/venv"
SCHEMATHESIS_SPEC='schemathesis>=4.32,<5'
# Where cargo put it: CARGO_TARGET_DIR (relative to the root, as cargo reads it here) or target/.
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
[[ "$TARGET_DIR" == /* ]] || TARGET_DIR="$ROOT/$TARGET_DIR"
SERVER="$TARGET_DIR/debug/token-service"
MAX_EXAMPLES="${MAX_EXAMPLES:-100}"
SEED="${FUZZ_SEED:-$(((RANDOM << 15) | RANDOM))}"
REQUEST_TIMEOUT=10

[[ -x "$SERVER" ]] || { echo "fuzz-api: $SERVER is missing: run cargo build --workspace --bins" >&2; exit 1; }
# shellcheck source=infra/lib/venv.sh
source "$ROOT/infra/lib/venv.sh"
if ! "$VENV/bin/python" -c 'import schemathesis' 2>/dev/null; then
	echo "fuzz-api: installing $SCHEMATHESIS_SPEC into $VENV" >&2
	venv_install "$VENV" "$SCHEMATHESIS_SPEC"
fi

# A free loopback port, and a fresh data directory with its own demo data.
# shellcheck source=infra/lib/local-server.sh
source "$ROOT/infra/lib/local-server.sh"
# Self-registration open and unlimited, so that /oauth2/v0/register and its management are
# fuzzed too (off, they answer 404 to everything); SCIM unlimited, so that its thousands of
# generated requests reach the operations rather than the company's limit.
DYNAMIC_REGISTRATION=open RATE_LIMIT_REGISTRATIONS_PER_HOUR=0 RATE_LIMIT_SCIM_PER_MINUTE=0 \
	start_local_server "$VENV/bin/python" fuzz-api

# The demo client's credentials, so that generated token, revocation, introspection and one-time
# password requests get past client authentication into the grants and flows (the one-time
# passwords are mailed as .eml files under DATA_DIR/outbox/).
CLIENT_AUTH="$("$VENV/bin/python" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["client_id"] + ":" + d["client_secret"])' "$DATA_DIR/demo.json")"

echo "fuzz-api: schemathesis $("$VENV/bin/schemathesis" --version | awk '{print $NF}') against $BASE, $MAX_EXAMPLES examples per operation, seed $SEED (FUZZ_SEED=$SEED to replay)" >&2
# Three runs: the client-authenticated endpoints with the demo client's Basic credentials,
# everything without credentials, then the operations that take a bearer token, each with a valid
# one (infra/fuzz-api-bearer.toml). The tokens are the last run's, so that the first two runs'
# revocations cannot end them. `positive_data_acceptance` is left out: it expects every
# schema-valid request to succeed, but a schema-valid request still names unknown users,
# tokens and companies, which are rightly refused.
# One worker: with two, hypothesis describes its strategies' lambdas from two threads at once, and
# CPython 3.11's parser then fails now and then with "AST constructor recursion depth mismatch"
# (a Runtime Error that is schemathesis's, not the service's; seen 2026-11-25).
# schemathesis runs in the data directory, where its `.schemathesis/` cache goes away with the rest.
# `CONFIG=file run ...`: with that schemathesis configuration (a global option, before `run`);
# `EXCLUDE=checks run ...`: without those checks (positive_data_acceptance, as above, by default).
run() {
	local config=()
	[[ -z "${CONFIG:-}" ]] || config=(--config-file "$CONFIG")
	(cd "$DATA_DIR" && "$VENV/bin/schemathesis" "${config[@]}" run "$BASE/openapi.json" \
		--checks all \
		--exclude-checks "${EXCLUDE:-positive_data_acceptance}" \
		--max-examples "$MAX_EXAMPLES" \
		--request-timeout "$REQUEST_TIMEOUT" \
		--max-response-time "$REQUEST_TIMEOUT" \
		--workers 1 \
		--seed "$SEED" \
		--no-color \
		--suppress-health-check all "$@")
}
status=0
run --include-path-regex '^/(v0/token|oauth2/v0/(token|revoke|introspect|otp))$' --auth "$CLIENT_AUTH" ||
	status=$?
# The operations that require a bearer token are left to the third run: here they could only
# answer 401, and that run's `ignored_auth` check sends each of them requests without it too.
run --exclude-path-regex '^/(app-mgmt/v4/apps/|app-mgmt/v0/connections$|profile-service/v1/keys/principals/|scim/v2/)' ||
	status=$?
# Read into a variable first: a failure inside `< <(...)` would go unnoticed under `set -e`, and
# the bearer runs would then fuzz only the 401 path.
tokens="$("$VENV/bin/python" "$ROOT/infra/fuzz-api-tokens.py" "$BASE" "$DATA_DIR/demo.json")" || {
	echo "fuzz-api: the bearer tokens could not be obtained or do not work" >&2
	exit 1
}
while IFS='=' read -r name value; do
	export "$name=$value"
done <<<"$tokens"
CONFIG="$ROOT/infra/fuzz-api-bearer.toml" run \
	--include-path-regex '^/app-mgmt/(v4/apps/|v0/connections$)' || status=$?
# Userinfo and the company auth token take an optional form body whose parameters may all be
# absent, and ignore those they do not know (RFC 6749, 3.1). A generated "invalid" body such as
# `AAA` is, as a form, the unknown parameter `AAA`: accepting it is right, so the check that
# expects it refused is left out for them.
CONFIG="$ROOT/infra/fuzz-api-bearer.toml" EXCLUDE=positive_data_acceptance,negative_data_rejection run \
	--include-path-regex '^/(oauth2/v0/userinfo$|profile-service/v1/keys/principals/)' || status=$?
# SCIM with the demo company's provisioning token: generated users, groups, filters, PATCH and
# Bulk requests against the real store. `/Me` is left out: it answers 501 by design (RFC 7644
# 3.11 lets a service provider not support it), which the server-error check counts as a failure.
CONFIG="$ROOT/infra/fuzz-api-bearer.toml" run \
	--include-path-regex '^/scim/v2/' --exclude-path-regex '^/scim/v2/Me$' || status=$?
if ((status != 0)); then
	echo "fuzz-api: schemathesis found problems (server log: below)" >&2
	tail -n 50 "$DATA_DIR/server.log" >&2
fi
exit "$status"
