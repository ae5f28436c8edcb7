#!/usr/bin/env bash
# Refuses a read of the process environment (`env::var`, `env::var_os`, `env::vars`,
# `env::vars_os`) in the service's code (shared/ and functions/) anywhere but the one module that
# takes the binaries' snapshot, shared/core/src/config/environment.rs: every other part takes its
# section of the typed configuration (docs/decisions.md, "Configuration"). The test code under
# tests/ may read the variables that point it at its emulators. Comments are not reads.
#
# Prints file:line: text for each and fails; prints nothing and succeeds otherwise.
# Usage: infra/check-env-reads.sh            (from anywhere inside the repository; part of infra/test.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

ALLOWED='shared/core/src/config/environment.rs'

found="$(grep -rnE --include='*.rs' --exclude-dir=target -e '\benv::vars?(_os)?\b' shared functions |
	grep -v "^$ALLOWED:" |
	awk '{ text = $0; sub(/^[^:]*:[^:]*:/, "", text); line = text; sub(/^[[:space:]]+/, "", line)
		if (line !~ /^\/\//) print }' || true)"
if [[ -n "$found" ]]; then
	echo "$found"
	echo "infra/check-env-reads.sh: the environment is read outside $ALLOWED (take the configuration's section instead)" >&2
	exit 1
fi
