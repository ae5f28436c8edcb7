#!/usr/bin/env bash
# Real identity providers for the company-IdP tests (tests/integration/federation/), pinned:
# node-oidc-provider as a company's OpenID Provider (tests/idp/oidc_provider.mjs runs on it), and
# pysaml2 as a company's SAML 2.0 identity provider (tests/idp/saml_idp.py runs on it).
#
#   infra/identity-providers.sh install   install them (idempotent; quick when installed)
#
# The Node packages go to .cache/idp-node (npm install --prefix), ignored by git. Needs node
# >= 20.19 with npm. The Python packages (tests/idp/requirements-saml.txt) go to the virtualenv
# .cache/idp-python, reinstalled only when that file's hash differs from the one stamped there.
# Needs python3 with venv, and xmlsec1 at run time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_DIR="$ROOT/.cache/idp-node"
OIDC_PROVIDER="oidc-provider@9.13.3"
PYTHON_DIR="$ROOT/.cache/idp-python"
REQUIREMENTS="$ROOT/tests/idp/requirements-saml.txt"

log() { echo "identity-providers: $*" >&2; }

install_node() {
	command -v npm >/dev/null 2>&1 || {
		log "error: npm not found: apt-get install nodejs npm"
		exit 1
	}
	local manifest="$NODE_DIR/node_modules/oidc-provider/package.json" installed=""
	[[ -f "$manifest" ]] && installed="$(node -p "require('$manifest').version")"
	if [[ "$installed" != "${OIDC_PROVIDER#*@}" ]]; then
		log "installing $OIDC_PROVIDER into ${NODE_DIR#"$ROOT"/}"
		mkdir -p "$NODE_DIR"
		npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error --save-exact \
			"$OIDC_PROVIDER" >&2
	fi
}

install_python() {
	command -v python3 >/dev/null 2>&1 || {
		log "error: python3 not found: apt-get install python3 python3-venv"
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
	install_node
	install_python
	;;
*)
	echo "usage: $0 install" >&2
	exit 2
	;;
esac
