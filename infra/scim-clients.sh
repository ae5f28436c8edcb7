#!/usr/bin/env bash
# Real SCIM 2.0 clients for the SCIM server's integration tests, pinned: scim2-tester as a
# compliance checker (tests/scim/compliance.py runs on it), and scim2-client as a company's
# identity provider provisioning users and groups (tests/scim/provision.py runs on it).
#
#   infra/scim-clients.sh install   install them (idempotent; quick when installed)
#
# The Python packages (tests/scim/requirements.txt) go to the virtualenv .cache/scim-python,
# ignored by git, reinstalled only when that file's hash differs from the one stamped there.
# Needs python3 (>= 3.11, as scim2-tester does) with venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON_DIR="$ROOT/.cache/scim-python"
REQUIREMENTS="$ROOT/tests/scim/requirements.txt"

log() { echo "scim-clients: $*" >&2; }

install_python() {
	command -v python3 >/dev/null 2>&1 || {
		log "error: python3 not found: apt-get install python3 python3-venv"
		exit 1
	}
	python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
		log "error: $(python3 --version) is older than the 3.11 that scim2-tester needs"
		exit 1
	}
	local stamp="$PYTHON_DIR/.requirements.sha256" wanted
	wanted="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
	if [[ -x "$PYTHON_DIR/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
		return
	fi
	log "installing ${REQUIREMENTS#"$ROOT"/} into ${PYTHON_DIR#"$ROOT"/}"
	[[ -x "$PYTHON_DIR/bin/python" ]] || python3 -m venv "$PYTHON_DIR"
	"$PYTHON_DIR/bin/python" -m pip install --quiet --disable-pip-version-check \
		--requirement "$REQUIREMENTS" >&2
	echo "$wanted" >"$stamp"
}

case "${1:-}" in
install)
	install_python
	;;
*)
	echo "usage: $0 install" >&2
	exit 2
	;;
esac
