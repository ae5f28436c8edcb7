# shellcheck shell=bash
# cargo-lambda (and the zig linker it brings) from PyPI in the ignored virtualenv .cache/venv,
# installed on first use. Sourced by infra/lambda-build.sh, so that the version range lives in
# one place.

CARGO_LAMBDA_SPEC='cargo-lambda>=1.9,<2'

# ensure_cargo_lambda ROOT TAG
#   Creates ROOT/.cache/venv and installs cargo-lambda into it if missing (messages prefixed
#   with TAG), then puts the venv first on PATH: cargo finds its `lambda` subcommand there, and
#   cargo-lambda its zig.
ensure_cargo_lambda() {
	local venv="$1/.cache/venv" tag="$2"
	if [[ ! -x "$venv/bin/python" ]]; then
		echo "$tag: creating $venv" >&2
		python3 -m venv "$venv"
	fi
	if [[ ! -x "$venv/bin/cargo-lambda" ]]; then
		echo "$tag: installing $CARGO_LAMBDA_SPEC (with zig)" >&2
		"$venv/bin/pip" install --quiet --disable-pip-version-check "$CARGO_LAMBDA_SPEC"
	fi
	export PATH="$venv/bin:$PATH"
}
