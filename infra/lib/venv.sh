# shellcheck shell=bash
# Python virtualenvs under .cache/, made and filled the same way by every script that needs one
# (cfn-lint and schemathesis, the local KMS, the relying parties).
#
#   venv_install VENV SPEC...   create VENV when missing, then pip install the SPECs into it
#   venv_missing VENV PIN...    the pins (name==version, extras allowed) VENV does not hold, one
#                               a line (all of them when VENV does not exist yet)
#
# Both halves are the slow part of a fresh clone's test command, so both are cut down:
# - The virtualenv is made without its own pip when the machine's python3 has one: pip then
#   installs into it from outside (`pip --python`, pip 22.3 and later). Seeding each
#   virtualenv with pip took about 2.7 s of the 0.1 s a bare one takes.
# - `--no-compile`: no bytecode compiled for every module at install time (moto and boto3 are
#   thousands of modules; their install took 23.6 s, 11.8 s without). Python compiles the
#   modules a tool imports when it first runs, and keeps them.

venv_install() {
	local venv="$1"
	shift
	if python3 -m pip --help 2>/dev/null | grep -q -- '--python <python>'; then
		[[ -x "$venv/bin/python" ]] || python3 -m venv --without-pip "$venv" ||
			{ echo "python3 -m venv failed: apt-get install python3-venv" >&2; return 1; }
		python3 -m pip --python "$venv/bin/python" install --quiet --no-compile \
			--disable-pip-version-check "$@" >&2
	else
		[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv" ||
			{ echo "python3 -m venv failed: apt-get install python3-venv" >&2; return 1; }
		# A virtualenv made bare on a machine that had pip then.
		"$venv/bin/python" -m pip --version >/dev/null 2>&1 || "$venv/bin/python" -m ensurepip --upgrade >&2
		"$venv/bin/python" -m pip install --quiet --no-compile --disable-pip-version-check "$@" >&2
	fi
}

venv_missing() {
	local venv="$1"
	shift
	if [[ ! -x "$venv/bin/python" ]]; then
		printf '%s\n' "$@"
		return
	fi
	"$venv/bin/python" -c '
import re, sys
from importlib.metadata import PackageNotFoundError, version
for spec in sys.argv[1:]:
    name, pinned = spec.split("==")
    try:
        found = version(re.sub(r"\[.*\]", "", name))
    except PackageNotFoundError:
        found = None
    if found != pinned:
        print(spec)' "$@"
}
