#!/usr/bin/env bash
# Real identity providers for the company-IdP tests (tests/integration/federation/), pinned:
# node-oidc-provider as a company's OpenID Provider (tests/idp/oidc_provider.mjs runs on it).
#
#   infra/identity-providers.sh install   install them (idempotent; quick when installed)
#
# The Node packages go to .cache/idp-node (npm install --prefix), ignored by git. Needs node
# >= 20.19 with npm.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NODE_DIR="$ROOT/.cache/idp-node"
OIDC_PROVIDER="oidc-provider@9.13.3"

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

case "${1:-}" in
install) install_node ;;
*)
	echo "usage: $0 install" >&2
	exit 2
	;;
esac
