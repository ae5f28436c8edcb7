#!/usr/bin/env bash
# Refuses a cookie header written anywhere but the HTTP layer's cookie jar
# (shared/http/src/cookies.rs): no `SET_COOKIE` header, and no cookie attribute text (`HttpOnly`,
# `Max-Age=`, `SameSite=`) in the code of shared/ and functions/, so core returns values and never
# builds a header. Comments and the OpenAPI annotations' header names are not code that writes one.
#
# Prints file:line: text for each and fails; prints nothing and succeeds otherwise.
# Usage: infra/check-cookies.sh            (from anywhere inside the repository; part of infra/test.sh)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

found="$(grep -rnE --include='*.rs' --exclude-dir=target \
	-e 'SET_COOKIE' -e 'HttpOnly' -e 'Max-Age=' -e 'SameSite=' shared functions |
	grep -v '^shared/http/src/cookies\.rs:' |
	awk -F: '{ text = $0; sub(/^[^:]*:[^:]*:/, "", text); line = text; sub(/^[[:space:]]+/, "", line)
		if (line !~ /^\/\//) print }' || true)"
if [[ -n "$found" ]]; then
	echo "$found"
	echo "infra/check-cookies.sh: a cookie header is written outside shared/http/src/cookies.rs (its Jar)" >&2
	exit 1
fi
