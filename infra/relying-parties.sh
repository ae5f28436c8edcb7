#!/usr/bin/env bash
# Real OpenID Connect / OAuth 2.0 relying-party libraries, pinned, for the interoperability
# drivers under tests/interop/ (see tests/interop/README.md).
#
#   infra/relying-parties.sh install   install both (idempotent; quick when already installed)
#   infra/relying-parties.sh node      install the Node packages; print the node to run them with
#   infra/relying-parties.sh python    install the Python packages; print the venv's python
#
# Node packages go to .cache/rp-node (npm install --prefix), Python ones to the virtualenv
# .cache/rp-venv. Both are ignored by git. Needs node >= 20.19 with npm, and python3 with venv.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=infra/lib/venv.sh
source "$ROOT/infra/lib/venv.sh"
NODE_DIR="$ROOT/.cache/rp-node"
VENV="$ROOT/.cache/rp-venv"

# Pinned so every machine drives the server with the same libraries. openid-client 6 is built on
# oauth4webapi (its own pinned dependency); dpop is the same author's RFC 9449 proof builder.
# @modelcontextprotocol/sdk and mcp are the official MCP TypeScript and Python SDKs, whose OAuth
# clients agents use.
NODE_PACKAGES=(openid-client@6.8.9 oauth4webapi@3.8.8 dpop@2.1.2 @modelcontextprotocol/sdk@1.32.2)
PYTHON_PACKAGES=(authlib==1.9.6 requests==2.34.2 cryptography==50.0.2 mcp==2.3.0)

log() { echo "relying-parties: $*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# The pins among "$@" (name@version) that node_modules does not hold, one a line.
missing_node_packages() {
	node -e '
		const fs = require("fs");
		for (const spec of process.argv.slice(1)) {
			const at = spec.lastIndexOf("@");
			const manifest = `${process.env.NODE_DIR}/node_modules/${spec.slice(0, at)}/package.json`;
			let version = "";
			try { version = JSON.parse(fs.readFileSync(manifest, "utf8")).version; } catch {}
			if (version !== spec.slice(at + 1)) console.log(spec);
		}' -- "$@"
}

install_node() {
	command -v node >/dev/null 2>&1 || die "node not found: apt-get install nodejs npm"
	command -v npm >/dev/null 2>&1 || die "npm not found: apt-get install npm"
	local missing
	missing="$(NODE_DIR="$NODE_DIR" missing_node_packages "${NODE_PACKAGES[@]}")"
	if [[ -n "$missing" ]]; then
		log "installing ${missing//$'\n'/ } into ${NODE_DIR#"$ROOT"/}"
		mkdir -p "$NODE_DIR"
		npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error --save-exact \
			"${NODE_PACKAGES[@]}" >&2
	fi
}

install_python() {
	command -v python3 >/dev/null 2>&1 || die "python3 not found: apt-get install python3 python3-venv"
	local missing
	missing="$(venv_missing "$VENV" "${PYTHON_PACKAGES[@]}")"
	if [[ -n "$missing" ]]; then
		log "installing ${missing//$'\n'/ } into ${VENV#"$ROOT"/}"
		venv_install "$VENV" "${PYTHON_PACKAGES[@]}" || die "could not install ${PYTHON_PACKAGES[*]}"
	fi
}

case "${1:-}" in
install)
	install_node
	install_python
	echo "$(command -v node)"
	echo "$VENV/bin/python"
	;;
node)
	install_node
	# tests/interop/node/rp.mjs loads the packages from .cache/rp-node itself (RP_NODE_DIR).
	command -v node
	;;
python)
	install_python
	echo "$VENV/bin/python"
	;;
*)
	echo "usage: $0 install|node|python" >&2
	exit 2
	;;
esac
