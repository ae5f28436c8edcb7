# shellcheck shell=bash
# cargo-lambda (and the zig linker it brings) from PyPI in the ignored virtualenv .cache/venv,
# installed on first use. Sourced by infra/lambda-build.sh and infra/cargo-lambda-check.sh, so
# that the version lives in one place; they source infra/lib/venv.sh first.

# Pinned, as the other tools of .cache/ are: the test command runs `cargo lambda watch` and
# `invoke`, whose options and output change between releases.
CARGO_LAMBDA_SPEC='cargo-lambda==1.9.2'

# ensure_cargo_lambda ROOT TAG
#   Installs cargo-lambda into ROOT/.cache/venv (made when missing) unless it holds that version
#   (messages prefixed with TAG), then puts the venv first on PATH: cargo finds its `lambda`
#   subcommand there, and cargo-lambda its zig.
ensure_cargo_lambda() {
	local venv="$1/.cache/venv" tag="$2"
	if [[ -n "$(venv_missing "$venv" "$CARGO_LAMBDA_SPEC")" ]]; then
		echo "$tag: installing $CARGO_LAMBDA_SPEC (with zig) into ${venv#"$1"/}" >&2
		venv_install "$venv" "$CARGO_LAMBDA_SPEC"
	fi
	export PATH="$venv/bin:$PATH"
}
